-- stinkywait for Neovim's built-in LSP client (Neovim 0.7 or newer).
--
--   require('stinkywait').setup({
--     cmd = { '/path/to/stinkywait/.venv/bin/python', '-m', 'stinkywait_lsp' },
--     settings = { stinkywait = { hints = { label = 'compact' } } },
--   })
--
-- Filetypes: `stir` (*.stir) and `amdgpu-asm` (*.amdgcn, and *.s / *.asm that declare an
-- AMDGPU target anywhere or use AMDGPU-only instructions). Neovim 0.10+ renders the server's inlay hints natively; older
-- versions get the same hints as end-of-line virtual text. Commands: :StinkywaitInsertAll,
-- :StinkywaitHints (re-render the fallback hints), :StinkywaitRestart.
local M = {}

M.defaults = {
  name = 'stinkywait',
  cmd = { 'python3', '-m', 'stinkywait_lsp' },
  filetypes = { 'stir', 'amdgpu-asm' },
  -- the same keys as the VS Code settings (section `stinkywait`)
  settings = {
    stinkywait = {
      numWaves = 0,
      enableLoopCarriedTokenDeps = true,
      enableTensorDescriptorWar = false,
      optimize = true,
      -- used when the file declares no target (the file's own `.amdgcn_target` wins); one of
      -- targets: gfx900 gfx902 gfx904 gfx906 gfx908 gfx909 gfx90a gfx90c gfx940 gfx941 gfx942 gfx950
      --   gfx1010 gfx1011 gfx1012 gfx1013 gfx1030 gfx1031 gfx1032 gfx1033 gfx1034 gfx1035 gfx1036
      --   gfx1100 gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1153 gfx1200 gfx1201 gfx1250 gfx1251
      arch = 'gfx1250',
      coalesceWindow = -1,
    },
  },
  -- true: inline hints on 0.10+, end-of-line virtual text before that
  inlay_hints = true,
  root_markers = { '.git', 'pyproject.toml' },
}

M.namespace = vim.api.nvim_create_namespace('stinkywait_hints')
M.FIX_ALL = 'source.fixAll.stinkywait'

local config = vim.deepcopy(M.defaults)
local client_id = nil -- Neovim 0.7: one shared client, attached per buffer

local function has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

-- The same content rule as the VS Code extension (editors/vscode/src/detection.ts): a target
-- directive or st.token annotation anywhere in the first MAX_DIRECTIVE_LINES lines, or at least
-- two families of AMDGPU-only instructions (no x86, ARM or RISC-V mnemonic has their prefixes)
-- as the first word of a line in the first MAX_MNEMONIC_LINES.
local MAX_DIRECTIVE_LINES = 40000
local MAX_MNEMONIC_LINES = 4000
local FAMILIES = {
  { 's_waitcnt', '^s_waitcnt' }, { 's_wait', '^s_wait_' }, { 's_endpgm', '^s_endpgm$' },
  { 's_load', '^s_load_' }, { 's_load', '^s_buffer_load_' }, { 's_barrier', '^s_barrier' },
  { 's_setprio', '^s_setprio$' }, { 'buffer', '^buffer_load_' }, { 'buffer', '^buffer_store_' },
  { 'buffer', '^buffer_atomic_' }, { 'global', '^global_load_' }, { 'global', '^global_store_' },
  { 'global', '^global_atomic_' }, { 'flat', '^flat_load_' }, { 'flat', '^flat_store_' },
  { 'ds', '^ds_read' }, { 'ds', '^ds_write' }, { 'ds', '^ds_load' }, { 'ds', '^ds_store' },
  { 'mfma', '^v_mfma_' }, { 'wmma', '^v_wmma_' }, { 'wmma', '^v_swmmac_' }, { 'accvgpr', '^v_accvgpr_' },
  { 'tensor', '^tensor_' },
}

local function declares_amdgpu_target(bufnr)
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, MAX_DIRECTIVE_LINES, false)) do
    if line:match('^%s*%.amdgcn_target') or line:match('^%s*%.amdhsa_code_object_version')
        or line:match('^%s*%.amdhsa_kernel') or line:match('//%s*st%.token:%d') then
      return true
    end
  end
  local found, n = {}, 0
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, MAX_MNEMONIC_LINES, false)) do
    local word, after = line:match('^%s*([%a_][%w_.]*)(.?)')
    if word and (after == '' or after:match('%s')) then
      word = word:lower()
      for _, fam in ipairs(FAMILIES) do
        if not found[fam[1]] and word:match(fam[2]) then
          found[fam[1]] = true
          n = n + 1
          if n >= 2 then
            return true
          end
          break
        end
      end
    end
  end
  return false
end

local function root_dir(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  for _, marker in ipairs(config.root_markers) do
    local found = vim.fn.findfile(marker, dir .. ';')
    if found == '' then
      found = vim.fn.finddir(marker, dir .. ';')
    end
    if found ~= '' then
      return vim.fn.fnamemodify(found, ':p:h:h')
    end
  end
  return dir
end

--- The text of an LSP inlay hint (a string or a list of label parts).
function M.hint_label(hint)
  if type(hint.label) == 'string' then
    return hint.label
  end
  local parts = {}
  for _, part in ipairs(hint.label) do
    table.insert(parts, part.value)
  end
  return table.concat(parts)
end

--- Fallback for Neovim < 0.10: the server's inlay hints as end-of-line virtual text.
function M.render_hints(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = vim.api.nvim_buf_line_count(bufnr), character = 0 } },
  }
  vim.lsp.buf_request(bufnr, 'textDocument/inlayHint', params, function(err, result)
    if err or not vim.api.nvim_buf_is_loaded(bufnr) then
      return
    end
    vim.api.nvim_buf_clear_namespace(bufnr, M.namespace, 0, -1)
    local by_line = {}
    for _, hint in ipairs(result or {}) do
      local line = hint.position.line
      by_line[line] = by_line[line] or {}
      table.insert(by_line[line], vim.trim(M.hint_label(hint)))
    end
    local last = vim.api.nvim_buf_line_count(bufnr) - 1
    for line, labels in pairs(by_line) do
      vim.api.nvim_buf_set_extmark(bufnr, M.namespace, math.min(line, last), 0, {
        virt_text = { { '  ⧗ ' .. table.concat(labels, ' · '), 'Comment' } },
        virt_text_pos = 'eol',
      })
    end
  end)
end

local function on_attach(_client, bufnr)
  if not config.inlay_hints then
    return
  end
  if vim.lsp.inlay_hint and vim.lsp.inlay_hint.enable then
    -- 0.10 takes (bufnr, enable); 0.10.1+ takes (enable, filter)
    if not pcall(vim.lsp.inlay_hint.enable, true, { bufnr = bufnr }) then
      pcall(vim.lsp.inlay_hint.enable, bufnr, true)
    end
    return
  end
  -- The server publishes diagnostics after every analysis: re-render the hints then.
  local group = vim.api.nvim_create_augroup('stinkywait_hints_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    buffer = bufnr,
    callback = function()
      M.render_hints(bufnr)
    end,
  })
  M.render_hints(bufnr)
end

local function client_config(bufnr)
  return {
    name = config.name,
    cmd = config.cmd,
    root_dir = root_dir(bufnr),
    settings = config.settings,
    -- Neovim 0.7 does not answer workspace/configuration: send the settings up front too.
    init_options = config.settings.stinkywait,
    on_attach = on_attach,
  }
end

function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.lsp.start then
    return vim.lsp.start(client_config(bufnr), { bufnr = bufnr })
  end
  if not client_id or not vim.lsp.get_client_by_id(client_id) then
    client_id = vim.lsp.start_client(client_config(bufnr))
  end
  if client_id then
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  return client_id
end

--- Insert every planned wait of the buffer (the server's source.fixAll.stinkywait action).
function M.insert_all(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = vim.api.nvim_buf_line_count(bufnr), character = 0 } },
    context = { diagnostics = {}, only = { M.FIX_ALL } },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, 10000) or {}
  for id, response in pairs(responses) do
    for _, action in ipairs(response.result or {}) do
      if action.kind == M.FIX_ALL and action.edit then
        local client = vim.lsp.get_client_by_id(id)
        vim.lsp.util.apply_workspace_edit(action.edit, client and client.offset_encoding or 'utf-16')
        return true
      end
    end
  end
  vim.notify('stinkywait: no waits to insert', vim.log.levels.INFO)
  return false
end

function M.setup(opts)
  config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  local group = vim.api.nvim_create_augroup('stinkywait', { clear = true })
  for pattern, filetype in pairs({ ['*.stir'] = 'stir', ['*.amdgcn'] = 'amdgpu-asm' }) do
    vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
      group = group,
      pattern = pattern,
      callback = function(ev)
        vim.bo[ev.buf].filetype = filetype
      end,
    })
  end
  vim.api.nvim_create_autocmd('BufRead', {
    group = group,
    pattern = { '*.s', '*.S', '*.asm' },
    callback = function(ev)
      if declares_amdgpu_target(ev.buf) then
        vim.bo[ev.buf].filetype = 'amdgpu-asm'
      end
    end,
  })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = config.filetypes,
    callback = function(ev)
      vim.bo[ev.buf].commentstring = '// %s'
      M.attach(ev.buf)
    end,
  })
  vim.api.nvim_create_user_command('StinkywaitInsertAll', function()
    M.insert_all()
  end, { desc = 'stinkywait: insert all planned waits' })
  vim.api.nvim_create_user_command('StinkywaitHints', function()
    M.render_hints()
  end, { desc = 'stinkywait: show planned waits as virtual text' })
  vim.api.nvim_create_user_command('StinkywaitRestart', function()
    local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)()
    for _, client in pairs(clients) do
      if client.name == config.name then
        client.stop()
      end
    end
    client_id = nil
    vim.defer_fn(function()
      for _, buf in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(config.filetypes, vim.bo[buf].filetype) then
          M.attach(buf)
        end
      end
    end, 500)
  end, { desc = 'stinkywait: restart the language server' })
  -- buffers opened before setup()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(config.filetypes, vim.bo[buf].filetype) then
      M.attach(buf)
    end
  end
end

return M
