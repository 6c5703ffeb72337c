// stinkywait VS Code client: starts the language server (bundled in the .vsix, run with a
// Python >= 3.11 it finds), owns the output channel, the status bar item and the commands
// (insert all waits, show the wait plan, restart, show output).
import * as vscode from 'vscode';
import {
  ClientCapabilities,
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import { detectAmdgpuAssembly } from './detect';
import { FirstHints } from './firstHints';
import { describeLaunch, Launch, LaunchProblem, preflight, resolveLaunch } from './launch';
import { LineLog } from './log';
import { Plan, PlanView } from './plan';
import { StatusBar } from './status';
import { collectFixAll, documentStatus, PLAN_REQUEST } from './requests';

export const LANGUAGES = ['stir', 'amdgpu-asm'] as const;
export const SECTION = 'stinkywait';
/** Settings the server reads (the `stinkywait` section minus the client-only keys). */
export const ANALYSIS_KEYS = ['numWaves', 'enableLoopCarriedTokenDeps', 'enableTensorDescriptorWar', 'optimize', 'arch', 'coalesceWindow', 'latencyModel'] as const;
/** Settings that change how results are shown (the server re-renders; nothing restarts). */
export const VIEW_KEYS = ['hints', 'severity'] as const;

export function isKernelDocument(doc: vscode.TextDocument | undefined): doc is vscode.TextDocument {
  return !!doc && (LANGUAGES as readonly string[]).includes(doc.languageId);
}

export function analysisSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const out: Record<string, unknown> = {};
  for (const key of [...ANALYSIS_KEYS, ...VIEW_KEYS]) {
    const value = config.get(key);
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out;
}

/** The command behind the hover's link: the wait plan at the hovered line (its FIFO state). */
export const HOVER_DETAIL_COMMAND = 'stinkywait.showWaitPlan';

/** Tells the server (experimental capability `stinkywait.hoverDetailCommand`) that this
 *  client runs the hover's detail link: VS Code's hover box is 250 px high by default, so
 *  the server's hover is then the summary, and the FIFO state goes to the wait plan. */
const hoverDetailFeature: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, stinkywait: { hoverDetailCommand: HOVER_DETAIL_COMMAND } };
  },
  initialize(): void {},
  getState: () => ({ kind: 'static' }),
  clear(): void {},
};

/** Settings that name a program to run: VS Code reads them from the user settings only
 *  while the workspace is not trusted (package.json `restrictedConfigurations`). */
export const RESTRICTED_KEYS = ['server.path', 'server.args', 'server.pythonPath', 'server.importStrategy'] as const;

function serverConfigKey(): string {
  const config = vscode.workspace.getConfiguration(SECTION);
  return JSON.stringify(RESTRICTED_KEYS.map((k) => config.get(k)));
}

const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

export class ServerManager implements vscode.Disposable {
  client: LanguageClient | undefined;
  launch: Launch | undefined;
  private readonly stateListeners: vscode.Disposable[] = [];
  private crashes: number[] = [];
  private everRunning = false;
  private starting: Promise<void> | undefined;

  private readonly clientLog: LineLog;
  private readonly traceLog: LineLog;
  private readonly firstHints = new FirstHints();

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly status: StatusBar,
    private readonly extensionPath: string,
  ) {
    this.clientLog = new LineLog(output);
    this.traceLog = new LineLog(output, 'info');
  }

  /** Whether a start was attempted: the server starts with the first kernel, not with VS Code. */
  attempted = false;
  /** The `stinkywait.server.*` values the server was started with (`serverConfigKey`). */
  private serverConfig = '';

  /** Restart when the server settings in effect changed (an edit, or trust granted to the
   *  workspace, which brings its restricted settings into effect). */
  async restartIfServerConfigChanged(why: string): Promise<void> {
    if (!this.attempted || serverConfigKey() === this.serverConfig) {
      return;
    }
    this.output.info(`${why}: the server settings changed`);
    await this.restart();
  }

  async start(): Promise<void> {
    this.attempted = true;
    if (this.starting) {
      return this.starting;
    }
    this.starting = this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    this.status.setState('starting');
    this.serverConfig = serverConfigKey();
    if (!vscode.workspace.isTrusted) {
      this.output.info(`Restricted Mode: ${RESTRICTED_KEYS.map((k) => `${SECTION}.${k}`).join(', ')} come from your user settings only (the workspace's are ignored until you trust it)`);
    }
    const resolved = await resolveLaunch(this.extensionPath, (m) => this.output.info(m));
    if (isProblem(resolved)) {
      this.reportProblem(resolved);
      return;
    }
    const launch = resolved;
    this.launch = launch;
    const where = launch.python
      ? `${launch.bundled ? 'the bundled server' : 'the installed stinkywait'} on Python ${launch.version ?? '?'} (${launch.python}, from ${launch.source})`
      : `stinkywait.server.path`;
    this.output.info(`server: ${where}: ${describeLaunch(launch)}`);
    const problem = await preflight(launch);
    if (problem) {
      this.reportProblem(problem);
      return;
    }
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      transport: TransportKind.stdio,
      options: { cwd: launch.cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: LANGUAGES.flatMap((language) => [
        { scheme: 'file', language },
        { scheme: 'untitled', language },
      ]),
      outputChannel: this.clientLog,
      traceOutputChannel: this.traceLog,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // the hover's link to the wait plan is a command link: trusted for that command only
      markdown: { isTrusted: { enabledCommands: [HOVER_DETAIL_COMMAND] } },
      middleware: { provideInlayHints: this.firstHints.provideInlayHints },
      initializationOptions: analysisSettings(),
      synchronize: { configurationSection: SECTION },
      // A server that dies before it answered `initialize` is broken, not flaky: no retries.
      initializationFailedHandler: () => false,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onClosed(),
      },
    };
    const client = new LanguageClient(SECTION, 'stinkywait', serverOptions, clientOptions);
    client.registerFeature(hoverDetailFeature);
    this.firstHints.reset(client);
    this.client = client;
    this.everRunning = false;
    this.stateListeners.push(
      client.onDidChangeState((e) => {
        if (e.newState === State.Running) {
          this.everRunning = true;
          this.status.setState('running', this.serverLabel());
        } else if (e.newState === State.Starting) {
          this.status.setState('starting');
        } else if (this.status.state !== 'failed') {
          this.status.setState('stopped');
        }
      }),
    );
    try {
      await client.start();
      this.output.info(`server started: ${this.serverLabel()}`);
      this.status.setState('running', this.serverLabel());
    } catch (err) {
      const message = `stinkywait: the language server did not start (${describeLaunch(launch)}): ${err instanceof Error ? err.message : String(err)}`;
      this.output.error(message);
      this.status.setState('failed', message);
      void this.showStartFailure(message, 'Open the stinkywait output for the server\'s error; check stinkywait.server.pythonPath / stinkywait.server.path.');
    }
  }

  private reportProblem(problem: LaunchProblem): void {
    this.output.error(problem.message);
    this.output.error(`fix: ${problem.fix}`);
    if (problem.detail) {
      this.output.error(problem.detail);
    }
    this.status.setState('failed', problem.message);
    void this.showStartFailure(problem.message, problem.fix);
  }

  private serverLabel(): string {
    const info = this.client?.initializeResult?.serverInfo;
    return info ? `${info.name}${info.version ? ' ' + info.version : ''}` : 'stinkywait-lsp';
  }

  private onClosed(): { action: CloseAction; message?: string; handled?: boolean } {
    if (!this.everRunning) {
      // start() reports this failure itself (with the fix)
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < RESTART_WINDOW_MS);
    this.crashes.push(now);
    if (this.crashes.length > MAX_RESTARTS) {
      const message = `stinkywait: the server stopped ${this.crashes.length} times in 3 minutes; not restarting it.`;
      this.output.error(message);
      this.status.setState('failed', message);
      void this.showStartFailure(message, 'Look at the traceback in the stinkywait output, then run "stinkywait: Restart Language Server".');
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    this.output.warn('server connection closed; restarting');
    return { action: CloseAction.Restart, handled: true };
  }

  private async showStartFailure(message: string, fix: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(`${message} Fix: ${fix}`, 'Open Settings', 'Show Output', 'Retry');
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'stinkywait.server');
    } else if (choice === 'Show Output') {
      this.output.show(true);
    } else if (choice === 'Retry') {
      await this.restart();
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const d of this.stateListeners.splice(0)) {
      d.dispose();
    }
    if (client) {
      try {
        await client.stop(5000);
      } catch (err) {
        this.output.warn(`stopping the server: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    this.status.setState('stopped');
  }

  async restart(): Promise<void> {
    this.crashes = [];
    this.output.info('restarting the server');
    await this.stop();
    await this.start();
  }

  runningClient(): LanguageClient | undefined {
    return this.client && this.client.state === State.Running ? this.client : undefined;
  }

  dispose(): void {
    this.firstHints.dispose();
    void this.stop();
  }
}

async function insertAllWaits(manager: ServerManager, output: vscode.LogOutputChannel): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || !isKernelDocument(editor.document)) {
    void vscode.window.showWarningMessage('stinkywait: open a .s/.amdgcn or .stir kernel first.');
    return;
  }
  const client = manager.runningClient();
  if (!client) {
    void vscode.window.showErrorMessage('stinkywait: the language server is not running; see the stinkywait output, or run "stinkywait: Restart Language Server".');
    return;
  }
  const doc = editor.document;
  const version = doc.version;
  const edit = await collectFixAll(client, doc);
  if (!edit) {
    void vscode.window.showInformationMessage('stinkywait: no waits to insert in this file.');
    return;
  }
  if (doc.version !== version) {
    void vscode.window.showWarningMessage('stinkywait: the file changed while the waits were computed; run the command again.');
    return;
  }
  const applied = await vscode.workspace.applyEdit(edit);
  output.info(`insert all waits: ${applied ? 'applied' : 'rejected'} ${edit.size} file edit(s)`);
  if (!applied) {
    void vscode.window.showErrorMessage('stinkywait: VS Code rejected the edit (the file may have changed); run the command again.');
  }
}

let activeManager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<{ manager: ServerManager }> {
  const output = vscode.window.createOutputChannel('stinkywait', { log: true });
  const status = new StatusBar();
  const manager = new ServerManager(output, status, context.extensionPath);
  activeManager = manager;
  const plan = new PlanView(output, (doc, line) => fetchPlan(manager, doc, line));
  context.subscriptions.push(output, status, manager, plan);

  // The status item belongs to every stir / amdgpu-asm editor. Anything that can change the
  // active editor's language (switching editors, content detection, "Change Language Mode",
  // which re-opens the document under its new language) re-checks it, now and once the
  // editor has caught up with the event.
  const updateVisibility = () => {
    const shown = isKernelDocument(vscode.window.activeTextEditor?.document);
    const was = status.shown;
    status.setVisible(shown);
    if (shown && !was) {
      refreshStatus(0);
    }
  };
  const recheckVisibility = () => {
    updateVisibility();
    setTimeout(updateVisibility, 0);
    setTimeout(updateVisibility, 250);
  };

  let countTimer: NodeJS.Timeout | undefined;
  const refreshStatus = (delay = 250) => {
    if (countTimer) {
      clearTimeout(countTimer);
    }
    countTimer = setTimeout(async () => {
      const doc = vscode.window.activeTextEditor?.document;
      const client = manager.runningClient();
      if (!isKernelDocument(doc)) {
        status.setDocumentStatus(undefined);
        return;
      }
      if (!client) {
        return;
      }
      try {
        const st = await documentStatus(client, doc);
        if (vscode.window.activeTextEditor?.document === doc) {
          status.setDocumentStatus(st, doc.uri);
        }
      } catch (err) {
        output.debug(`document status: ${err instanceof Error ? err.message : String(err)}`);
      }
    }, delay);
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('stinkywait.restartServer', async () => {
      await manager.restart();
      refreshStatus(0);
    }),
    vscode.commands.registerCommand('stinkywait.insertAllWaits', () => insertAllWaits(manager, output)),
    // from the editor title (a Uri), the palette (nothing) or the hover's link ([uri, line])
    vscode.commands.registerCommand(HOVER_DETAIL_COMMAND, (uri?: vscode.Uri | string, line?: number) =>
      plan.show(typeof uri === 'string' ? vscode.Uri.parse(uri) : uri, typeof line === 'number' ? line : undefined)),
    vscode.commands.registerCommand('stinkywait.showOutput', () => output.show(true)),
    vscode.window.onDidChangeActiveTextEditor(() => {
      recheckVisibility();
      refreshStatus(0);
    }),
    vscode.window.onDidChangeVisibleTextEditors(() => recheckVisibility()),
    vscode.workspace.onDidCloseTextDocument(() => recheckVisibility()),
    // The server publishes diagnostics twice per analysed version (the plan's findings with the
    // hints, then the full set after the review): each is the right moment to recount.
    vscode.languages.onDidChangeDiagnostics((e) => {
      const doc = vscode.window.activeTextEditor?.document;
      if (doc && e.uris.some((u) => u.toString() === doc.uri.toString())) {
        refreshStatus();
      }
    }),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === vscode.window.activeTextEditor?.document && isKernelDocument(e.document)) {
        refreshStatus(800);
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => manager.restartIfServerConfigChanged('workspace trusted')),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration(`${SECTION}.server`)) {
        await manager.restartIfServerConfigChanged('settings changed');
      }
      if ([...ANALYSIS_KEYS, ...VIEW_KEYS].some((k) => e.affectsConfiguration(`${SECTION}.${k}`))) {
        refreshStatus(600);
        plan.refresh(600);
      }
    }),
  );
  // Start the server with the first kernel; `.s`/`.asm` files get their language from content.
  const onDocument = async (doc: vscode.TextDocument) => {
    let current = doc;
    try {
      current = await detectAmdgpuAssembly(doc);
    } catch (err) {
      output.warn(`language detection for ${doc.fileName}: ${err instanceof Error ? err.message : String(err)}`);
    }
    recheckVisibility();
    if (isKernelDocument(current) && !manager.attempted) {
      await manager.start();
      refreshStatus(0);
    }
  };
  context.subscriptions.push(vscode.workspace.onDidOpenTextDocument((doc) => void onDocument(doc)));
  recheckVisibility();
  await Promise.all(vscode.workspace.textDocuments.map((doc) => onDocument(doc)));
  return { manager };
}

function isProblem(x: Launch | LaunchProblem): x is LaunchProblem {
  return (x as LaunchProblem).fix !== undefined;
}

async function fetchPlan(manager: ServerManager, doc: vscode.TextDocument, line: number | undefined): Promise<Plan> {
  const client = manager.runningClient();
  if (!client) {
    throw new Error('the language server is not running');
  }
  const plan = await client.sendRequest<Plan | null>(PLAN_REQUEST, {
    textDocument: client.code2ProtocolConverter.asTextDocumentIdentifier(doc),
    ...(line !== undefined ? { line } : {}),
  });
  if (!plan || !Array.isArray(plan.functions)) {
    throw new Error(`the server has no plan for ${doc.uri.toString()} (is it a stir / amdgpu-asm document?)`);
  }
  return plan;
}

export function deactivate(): Thenable<void> | undefined {
  const manager = activeManager;
  activeManager = undefined;
  return manager?.stop();
}
