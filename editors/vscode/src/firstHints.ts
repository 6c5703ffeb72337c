// The first inlay-hint request of a document, answered at once. VS Code waits before it asks
// for hints after an edit, for the average time of the last six hint requests of that editor
// (25-625 ms, `editor/common/services/languageFeatureDebounce.ts`). The first request of a
// newly opened kernel waits for the server's cold analysis (about a second for a 3k-line
// GEMM on a loaded machine): in that average, it held back the next five edits' hints by
// 300-940 ms before VS Code even asked. Nothing is on screen before a document's first
// answer, so when the server takes longer than FIRST_ANSWER_MS this answers "no hints yet"
// and asks VS Code again (the provider's change event) as soon as the server's answer is in;
// every later request goes to the server and waits for it, as before, also after a server
// restart (so hints never go stale or blink out after an edit).
import * as vscode from 'vscode';
import { InlayHintRequest, LanguageClient, ProvideInlayHintsSignature } from 'vscode-languageclient/node';

export const FIRST_ANSWER_MS = 40;

export class FirstHints implements vscode.Disposable {
  /** documents whose hints the server has answered at least once (by URI) */
  private readonly answered = new Set<string>();
  private readonly disposables: vscode.Disposable[];
  client: LanguageClient | undefined;

  constructor() {
    this.disposables = [vscode.workspace.onDidCloseTextDocument((doc) => this.answered.delete(doc.uri.toString()))];
  }

  /** `middleware.provideInlayHints` of the language client. */
  readonly provideInlayHints = async (document: vscode.TextDocument, range: vscode.Range, token: vscode.CancellationToken,
    next: ProvideInlayHintsSignature): Promise<vscode.InlayHint[] | null | undefined> => {
    const key = document.uri.toString();
    const pending = Promise.resolve(next(document, range, token));
    if (this.answered.has(key)) {
      return pending;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = Symbol('late');
    const first = await Promise.race([pending, new Promise<typeof late>((resolve) => { timer = setTimeout(() => resolve(late), FIRST_ANSWER_MS); })]);
    clearTimeout(timer);
    if (first !== late) {
      this.answered.add(key);
      return first;
    }
    pending.then((hints) => {
      if (hints && !token.isCancellationRequested) {
        this.answered.add(key);
        this.askAgain(document);
      }
    }, () => undefined);
    return [];
  };

  /** Fire the provider's change event: VS Code asks for the document's hints again. */
  private askAgain(document: vscode.TextDocument): void {
    const feature = this.client?.getFeature(InlayHintRequest.method);
    feature?.getProvider(document)?.onDidChangeInlayHints.fire();
  }

  /** A new server (a restart): the documents answered before keep their hints on screen
   *  until the new server answers, so their requests wait for it as every later one does. */
  reset(client: LanguageClient): void {
    this.client = client;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) {
      d.dispose();
    }
  }
}
