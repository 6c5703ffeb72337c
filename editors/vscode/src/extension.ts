// stinkywait VS Code client: starts the Python language server, owns the output channel,
// the status bar item and the three commands (insert all waits, show the wait plan, restart).
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { detectAmdgpuAssembly } from './detect';
import { describeLaunch, Launch, preflight, resolveLaunch } from './launch';
import { PlanView } from './plan';
import { StatusBar } from './status';
import { collectFixAll, countPlannedWaits } from './requests';

export const LANGUAGES = ['stir', 'amdgpu-asm'] as const;
export const SECTION = 'stinkywait';
/** Settings the server reads (the `stinkywait` section minus the client-only keys). */
export const ANALYSIS_KEYS = ['numWaves', 'enableLoopCarriedTokenDeps', 'enableTensorDescriptorWar', 'optimize', 'arch'] as const;

export function isKernelDocument(doc: vscode.TextDocument | undefined): doc is vscode.TextDocument {
  return !!doc && (LANGUAGES as readonly string[]).includes(doc.languageId);
}

export function analysisSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const out: Record<string, unknown> = {};
  for (const key of ANALYSIS_KEYS) {
    const value = config.get(key);
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out;
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

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly status: StatusBar,
  ) {}

  /** Whether a start was attempted: the server starts with the first kernel, not with VS Code. */
  attempted = false;

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
    const launch = resolveLaunch();
    this.launch = launch;
    this.output.info(`server command (${launch.source}): ${describeLaunch(launch)}`);
    this.status.setState('starting');
    const problem = await preflight(launch);
    if (problem) {
      this.output.error(problem.message);
      this.output.error(`fix: ${problem.fix}`);
      if (problem.detail) {
        this.output.error(problem.detail);
      }
      this.status.setState('failed', problem.message);
      void this.showStartFailure(problem.message, problem.fix);
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
      outputChannel: this.output,
      traceOutputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
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
  const manager = new ServerManager(output, status);
  activeManager = manager;
  const plan = new PlanView(output, () => manager.launch ?? resolveLaunch());
  context.subscriptions.push(output, status, manager, plan);

  let countTimer: NodeJS.Timeout | undefined;
  const refreshCount = (delay = 250) => {
    if (countTimer) {
      clearTimeout(countTimer);
    }
    countTimer = setTimeout(async () => {
      const doc = vscode.window.activeTextEditor?.document;
      const client = manager.runningClient();
      if (!isKernelDocument(doc)) {
        status.setWaitCount(undefined);
        return;
      }
      if (!client) {
        return;
      }
      try {
        const n = await countPlannedWaits(client, doc);
        if (vscode.window.activeTextEditor?.document === doc) {
          status.setWaitCount(n, doc.uri);
        }
      } catch (err) {
        output.debug(`counting waits: ${err instanceof Error ? err.message : String(err)}`);
      }
    }, delay);
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('stinkywait.restartServer', async () => {
      await manager.restart();
      refreshCount(0);
    }),
    vscode.commands.registerCommand('stinkywait.insertAllWaits', () => insertAllWaits(manager, output)),
    vscode.commands.registerCommand('stinkywait.showWaitPlan', (uri?: vscode.Uri) => plan.show(uri)),
    vscode.commands.registerCommand('stinkywait.showOutput', () => output.show(true)),
    vscode.window.onDidChangeActiveTextEditor((e) => {
      status.setVisible(isKernelDocument(e?.document));
      refreshCount(0);
    }),
    // The server publishes diagnostics once per analysed version: the right moment to recount.
    vscode.languages.onDidChangeDiagnostics((e) => {
      const doc = vscode.window.activeTextEditor?.document;
      if (doc && e.uris.some((u) => u.toString() === doc.uri.toString())) {
        refreshCount();
      }
    }),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === vscode.window.activeTextEditor?.document && isKernelDocument(e.document)) {
        refreshCount(800);
      }
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration(`${SECTION}.server`) && manager.attempted) {
        output.info('server settings changed');
        await manager.restart();
      }
      if (ANALYSIS_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`))) {
        refreshCount(600);
        plan.refresh();
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
    if (isKernelDocument(current) && !manager.attempted) {
      await manager.start();
      refreshCount(0);
    }
  };
  context.subscriptions.push(vscode.workspace.onDidOpenTextDocument((doc) => void onDocument(doc)));
  status.setVisible(isKernelDocument(vscode.window.activeTextEditor?.document));
  await Promise.all(vscode.workspace.textDocuments.map((doc) => onDocument(doc)));
  return { manager };
}

export function deactivate(): Thenable<void> | undefined {
  const manager = activeManager;
  activeManager = undefined;
  return manager?.stop();
}
