// The output channel the language client writes to. vscode-languageclient appends the
// server's stderr in arbitrary chunks and its own lines with a "[Info  - 10:00:01]" prefix; a
// log channel stamps every append with its own time, so the log showed two time stamps and a
// blank line after every chunk. This channel splits what it is given into lines, drops the
// client's prefix, reads the level of the server's lines ("WARNING stinkywait_lsp.x: ...") and
// writes each line once, at its level, to the real log channel.
import * as vscode from 'vscode';

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const CLIENT_PREFIX = /^\[(Trace|Debug|Info|Warn|Error|LSP)\s*- [^\]]*\]\s?(.*)$/;
// the server's format, with the time stamp it adds in a file or on a terminal
const SERVER_LINE = /^(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} )?(DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;
const CLIENT_LEVEL: Record<string, Level> = { Trace: 'trace', LSP: 'trace', Debug: 'debug', Info: 'info', Warn: 'warn', Error: 'error' };
const SERVER_LEVEL: Record<string, Level> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error', CRITICAL: 'error' };

/** One line, as (level, text): its own level when it has one, else `previous` (a traceback's
 *  lines belong to the record that started it). */
export function classify(line: string, previous: Level): [Level, string] {
  const client = CLIENT_PREFIX.exec(line);
  if (client) {
    return [CLIENT_LEVEL[client[1]] ?? 'info', client[2]];
  }
  const server = SERVER_LINE.exec(line);
  if (server) {
    return [SERVER_LEVEL[server[1]] ?? 'info', server[2]];
  }
  return [previous, line];
}

export class LineLog implements vscode.OutputChannel {
  readonly name: string;
  private pending = '';
  private level: Level = 'info';

  /** `floor`: the lowest level a line is written at. The client's trace lines carry
   *  "[Trace - ...]": the trace channel writes them at `info`, so that what
   *  `stinkywait.trace.server` asks for shows at the log's default level. */
  constructor(private readonly log: vscode.LogOutputChannel, private readonly floor?: Level) {
    this.name = log.name;
  }

  append(value: string): void {
    this.pending += value;
    const lines = this.pending.split(/\r?\n/);
    this.pending = lines.pop() ?? '';
    for (const line of lines) {
      this.write(line);
    }
  }

  appendLine(value: string): void {
    this.append(value + '\n');
  }

  private write(line: string): void {
    if (!line.trim()) {
      return;
    }
    const [level, text] = classify(line, this.level);
    this.level = level;
    this.log[this.floor && (level === 'trace' || level === 'debug') ? this.floor : level](text);
  }

  replace(value: string): void {
    this.pending = '';
    this.log.replace(value);
  }

  clear(): void {
    this.pending = '';
    this.log.clear();
  }

  show(columnOrPreserve?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    if (typeof columnOrPreserve === 'boolean' || columnOrPreserve === undefined) {
      this.log.show(columnOrPreserve);
    } else {
      this.log.show(columnOrPreserve, preserveFocus);
    }
  }

  hide(): void {
    this.log.hide();
  }

  dispose(): void {
    if (this.pending) {
      this.write(this.pending);
      this.pending = '';
    }
  }
}
