// Requests the client sends on its own behalf: the document status (status bar), the plan
// (plan view) and the whole-file fix (the "Insert All Waits" command).
import * as vscode from 'vscode';
import type { DocumentStatus } from './status';
import {
  CodeAction,
  CodeActionRequest,
  CodeActionResolveRequest,
  Command,
  InlayHint,
  InlayHintRequest,
  LanguageClient,
} from 'vscode-languageclient/node';

export const FIX_ALL_KIND = 'source.fixAll.stinkywait';

function wholeDocument(doc: vscode.TextDocument): vscode.Range {
  const last = doc.lineAt(doc.lineCount - 1);
  return new vscode.Range(0, 0, last.lineNumber, last.range.end.character);
}

export function hintText(hint: InlayHint): string {
  return typeof hint.label === 'string' ? hint.label : hint.label.map((p) => p.value).join('');
}

/** Waits the server plans for the whole file: one inlay hint per planned wait, whose label
 *  names the wait instruction (`s_wait_...`). */
export async function countPlannedWaits(client: LanguageClient, doc: vscode.TextDocument): Promise<number> {
  const hints = await client.sendRequest(InlayHintRequest.type, {
    textDocument: client.code2ProtocolConverter.asTextDocumentIdentifier(doc),
    range: client.code2ProtocolConverter.asRange(wholeDocument(doc)),
  });
  return (hints ?? []).filter((h) => /s_wait_?\w*/.test(hintText(h))).length;
}

export const STATUS_REQUEST = 'stinkywait/status';
export const PLAN_REQUEST = 'stinkywait/plan';

/** Waits, target and findings of a document (`stinkywait/status`); a server without that
 *  request (an older one started through stinkywait.server.path) is asked for its hints. */
export async function documentStatus(client: LanguageClient, doc: vscode.TextDocument): Promise<DocumentStatus> {
  try {
    const status = await client.sendRequest<DocumentStatus | null>(STATUS_REQUEST, {
      textDocument: client.code2ProtocolConverter.asTextDocumentIdentifier(doc),
    });
    if (status) {
      return status;
    }
  } catch (err) {
    if (!/Unhandled method|MethodNotFound|-32601/.test(String(err instanceof Error ? err.message : err))) {
      throw err;
    }
  }
  return { waits: await countPlannedWaits(client, doc) };
}

function isCommand(x: Command | CodeAction): x is Command {
  return typeof (x as Command).command === 'string';
}

async function resolved(client: LanguageClient, action: CodeAction): Promise<CodeAction> {
  const canResolve = !!client.initializeResult?.capabilities.codeActionProvider
    && typeof client.initializeResult.capabilities.codeActionProvider === 'object'
    && client.initializeResult.capabilities.codeActionProvider.resolveProvider;
  if (action.edit || !canResolve) {
    return action;
  }
  return client.sendRequest(CodeActionResolveRequest.type, action);
}

/** The edit that inserts every planned wait of the document: the server's
 *  `source.fixAll.stinkywait` action, else its "Insert all" quick fix. */
export async function collectFixAll(client: LanguageClient, doc: vscode.TextDocument): Promise<vscode.WorkspaceEdit | undefined> {
  const c2p = client.code2ProtocolConverter;
  const range = c2p.asRange(wholeDocument(doc));
  const textDocument = c2p.asTextDocumentIdentifier(doc);
  const diagnostics = vscode.languages
    .getDiagnostics(doc.uri)
    .filter((d) => d.source === 'stinkywait')
    .map((d) => c2p.asDiagnostic(d));
  const attempts: { only: string[] | undefined; pick: (a: CodeAction) => boolean }[] = [
    { only: [FIX_ALL_KIND], pick: (a) => !!a.kind && (a.kind === FIX_ALL_KIND || a.kind.startsWith(FIX_ALL_KIND + '.')) },
    { only: ['source.fixAll'], pick: (a) => !!a.kind && a.kind.startsWith('source.fixAll') },
    { only: undefined, pick: (a) => /insert all/i.test(a.title) },
  ];
  for (const attempt of attempts) {
    const result = await client.sendRequest(CodeActionRequest.type, {
      textDocument,
      range,
      context: { diagnostics: await Promise.all(diagnostics), only: attempt.only },
    });
    const action = (result ?? []).find((x): x is CodeAction => !isCommand(x) && attempt.pick(x));
    if (!action) {
      continue;
    }
    const full = await resolved(client, action);
    if (full.command) {
      await vscode.commands.executeCommand(full.command.command, ...(full.command.arguments ?? []));
    }
    if (full.edit) {
      return client.protocol2CodeConverter.asWorkspaceEdit(full.edit);
    }
  }
  return undefined;
}
