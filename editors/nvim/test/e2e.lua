-- Headless Neovim end-to-end test of the documented config (editors/nvim/lua/stinkywait.lua)
-- against the real server. Run by editors/nvim/test/run.sh:
--   STINKYWAIT_PYTHON=... STINKYWAIT_WORK=<dir with copies of the fixtures> \
--   nvim --headless -u NONE -i NONE -c "luafile editors/nvim/test/e2e.lua"
-- Expected waits come from `stinkywait plan --json` on the same file. Prints PASS/FAIL lines
-- and `nvim: N passed, M failed`; exits non-zero (cquit) when anything failed.
local python = assert(os.getenv('STINKYWAIT_PYTHON'), 'STINKYWAIT_PYTHON not set')
local work = assert(os.getenv('STINKYWAIT_WORK'), 'STINKYWAIT_WORK not set')
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
vim.opt.runtimepath:prepend(vim.fn.fnamemodify(here, ':h'))

local passed, failed = 0, 0
local function out(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end
local function check(name, fn)
  local ok, detail = pcall(fn)
  if ok then
    passed = passed + 1
    out('PASS ' .. name .. (detail and (' — ' .. tostring(detail)) or ''))
  else
    failed = failed + 1
    out('FAIL ' .. name .. ' — ' .. tostring(detail))
  end
  return ok
end
local function wait_for(ms, what, fn)
  local value
  local ok = vim.wait(ms, function()
    value = fn()
    return value ~= nil and value ~= false
  end, 50)
  if not ok then
    error('timed out after ' .. ms .. ' ms waiting for ' .. what, 0)
  end
  return value
end

local function cli_plan(file)
  local text = vim.fn.system({ python, '-m', 'stinkywait_core.cli.main', 'plan', file, '--json' })
  local plan = vim.fn.json_decode(text)
  local waits = {}
  for _, f in ipairs(plan.functions) do
    for _, w in ipairs(f.waits) do
      table.insert(waits, w)
    end
  end
  return waits
end

local sw = require('stinkywait')
sw.setup({ cmd = { python, '-m', 'stinkywait_lsp' } })

local function run_file(name, filetype, hover_check)
  local file = work .. '/' .. name
  local plan = cli_plan(file)
  out(string.format('%s: the CLI plans %d waits', name, #plan))
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()

  check(name .. ': filetype detected as ' .. filetype, function()
    assert(vim.bo[buf].filetype == filetype, 'filetype is "' .. vim.bo[buf].filetype .. '"')
  end)

  local client
  check(name .. ': the stinkywait client attaches and initializes', function()
    client = wait_for(20000, 'an initialized stinkywait client', function()
      for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
        if c.name == 'stinkywait' and c.initialized then
          return c
        end
      end
    end)
    return 'client ' .. client.id
  end)
  if not client then
    return
  end

  check(name .. ': a diagnostic on the line of every planned wait', function()
    local diags = wait_for(30000, #plan .. ' diagnostics', function()
      local d = vim.diagnostic.get(buf)
      return #d >= #plan and d or nil
    end)
    for _, w in ipairs(plan) do
      local found = false
      for _, d in ipairs(diags) do
        if d.lnum == w.line - 1 and d.message:find(w.instruction, 1, true) then
          found = true
        end
      end
      assert(found, 'no diagnostic mentioning "' .. w.instruction .. '" on line ' .. w.line)
    end
    return #diags .. ' diagnostics'
  end)

  local hints
  check(name .. ': textDocument/inlayHint returns one s_wait_ hint per planned wait', function()
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      range = { start = { line = 0, character = 0 }, ['end'] = { line = vim.api.nvim_buf_line_count(buf), character = 0 } },
    }
    local resp = client.request_sync('textDocument/inlayHint', params, 10000, buf)
    assert(resp and not resp.err, 'request failed: ' .. vim.inspect(resp and resp.err))
    hints = resp.result or {}
    assert(#hints == #plan, #hints .. ' hints for ' .. #plan .. ' planned waits')
    local unmatched = {}
    for i, w in ipairs(plan) do
      unmatched[i] = w
    end
    for _, h in ipairs(hints) do
      local label = vim.trim(sw.hint_label(h))
      assert(label:sub(1, 7) == 's_wait_', 'hint label "' .. label .. '" does not start with s_wait_')
      for i, w in ipairs(unmatched) do
        if label:sub(1, #w.instruction) == w.instruction then
          table.remove(unmatched, i)
          break
        end
      end
    end
    assert(#unmatched == 0, 'no hint for ' .. vim.inspect(vim.tbl_map(function(w) return w.instruction end, unmatched)))
    return vim.trim(sw.hint_label(hints[1]))
  end)

  if not vim.lsp.inlay_hint then
    check(name .. ': hints rendered as virtual text (Neovim < 0.10 fallback)', function()
      local marks = wait_for(10000, 'stinkywait extmarks', function()
        local m = vim.api.nvim_buf_get_extmarks(buf, sw.namespace, 0, -1, { details = true })
        return #m > 0 and m or nil
      end)
      local text = ''
      for _, m in ipairs(marks) do
        for _, chunk in ipairs(m[4].virt_text or {}) do
          text = text .. chunk[1]
        end
      end
      assert(text:find('s_wait_', 1, true), 'virtual text without s_wait_: ' .. text)
      return #marks .. ' lines with hints'
    end)
  end

  if hover_check then
    check(name .. ': hover shows the FIFO state', function()
      local w = plan[#plan]
      local resp = client.request_sync('textDocument/hover', {
        textDocument = { uri = vim.uri_from_bufnr(buf) },
        position = { line = w.line - 1, character = (w.column or 1) - 1 },
      }, 10000, buf)
      assert(resp and resp.result, 'no hover')
      local value = resp.result.contents.value or vim.inspect(resp.result.contents)
      assert(value:find('In flight before this instruction', 1, true), 'no FIFO section in:\n' .. value)
      -- ops are listed one by one (`L12 `m``) or as runs of one mnemonic (`L12–15 `m` ×4`)
      local listed = {}
      for spans, mnemonic in value:gsub('\226\128\147', '-'):gmatch('L([%d%-, ]+) `([%w_%.]+)`') do
        for part in spans:gmatch('[^,]+') do
          local lo, hi = part:match('(%d+)%-?(%d*)')
          for l = tonumber(lo), tonumber(hi ~= '' and hi or lo) do
            listed[l .. ' ' .. mnemonic] = true
          end
        end
      end
      for _, d in ipairs(w.deps or {}) do
        assert(listed[d.line .. ' ' .. d.mnemonic], 'FIFO does not list L' .. d.line .. ' ' .. d.mnemonic .. ' in:\n' .. value)
      end
      return (#(w.deps or {})) .. ' producer(s) listed'
    end)
  end

  check(name .. ': :StinkywaitInsertAll inserts the waits and the diagnostics clear', function()
    local before = vim.api.nvim_buf_line_count(buf)
    assert(sw.insert_all(buf), 'no fix-all action')
    local added = vim.api.nvim_buf_line_count(buf) - before
    assert(added >= 1, 'no lines inserted')
    vim.cmd('silent write')
    local left = cli_plan(file)
    assert(#left == 0, 'the CLI still plans ' .. #left .. ' waits after insert-all')
    wait_for(30000, 'the diagnostics to clear', function()
      return #vim.diagnostic.get(buf) == 0 or nil
    end)
    return added .. ' lines inserted'
  end)
end

local ok, err = pcall(function()
  run_file('gemm_loop.s', 'amdgpu-asm', true)
  run_file('double_buffer.stir', 'stir', true)
end)
if not ok then
  failed = failed + 1
  out('FAIL nvim e2e run — ' .. tostring(err))
end
for _, c in pairs(vim.lsp.get_active_clients()) do
  c.stop(true)
end
out(string.format('nvim: %d passed, %d failed', passed, failed))
if failed > 0 then
  vim.cmd('cquit 1')
else
  vim.cmd('qall!')
end
