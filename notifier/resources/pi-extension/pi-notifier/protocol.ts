/**
 * pi-notifier companion extension: its wire protocol, pure (no pi, no sockets, no files, no clock).
 * The messages are described in index.ts's header; notifier/companion.py reads them.
 * Unit tests: tests/extension/protocol.test.ts (node --test).
 */

export const PROTOCOL = 1;
export const MAX_CLIENTS = 8;
export const MAX_IN = 1 << 20; // bytes buffered from one client without a newline
export const MAX_OUT = 4 << 20; // bytes queued to one client before it is dropped
export const MAX_TEXT = 16384;
export const MAX_OPTIONS = 200;
export const MAX_SCREEN_LINES = 200;
export const MAX_SCREEN_LINE = 2000;
export const MAX_KEYS = 256;
export const MAX_NAME = 200; // a tool's name and call id
// CSI, OSC and other escapes, for the plain-text mirror of a custom dialog
export const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b./g;
/** The socket of pi process ``pid``: ext-<pid>-<token>.sock (stale ones are swept by pid). */
export const SOCKET_NAME = /^ext-(\d+)-[0-9a-f]+\.sock$/;

export type Kind = "select" | "confirm" | "input" | "editor" | "custom";
export type Remote = "value" | "keys" | null;
export type How = "answered" | "cancelled" | "remote";
export type Mode = "wrap" | "events";
export type Json = Record<string, unknown>;

/** What the protocol says of one open dialog. */
export interface DialogInfo {
	id: string;
	kind: Kind;
	title: string | null;
	options: string[] | null;
	tool: string | null;
	toolCallId: string | null;
	toolInput: unknown;
	outerToolCallId: string | null; // a nested call's: the model's own call it runs under
	at: number;
	remote: Remote;
	waits: boolean; // known to wait for a human (select, confirm, input, editor; custom: decided later)
}

/** Where the dialogs are: this pi's session and process. */
export interface Where {
	sessionFile: string | null;
	sessionDir: string;
	cwd: string;
	pid: number;
}

export interface ToolCall {
	id: string;
	name: string;
	input: unknown;
	/** A nested call (one another tool made, such as a codemode script's): the model's own call it
	 * runs under, the one in the session file. Absent for the model's own calls. */
	outer?: string;
}

export function socketName(pid: number, token: string): string {
	return `ext-${pid}-${token}.sock`;
}

export function bound(value: unknown, limit = MAX_TEXT): string | null {
	if (typeof value !== "string") return null;
	return value.length > limit ? value.slice(0, limit) : value;
}

/** A JSON copy of ``value`` at most MAX_TEXT long, or null. */
export function boundJson(value: unknown): unknown {
	if (value === undefined) return null;
	try {
		const text = JSON.stringify(value);
		return text !== undefined && text.length <= MAX_TEXT ? JSON.parse(text) : null;
	} catch {
		return null;
	}
}

/** A component's rendered lines as plain text, bounded; null when they are not a list. */
export function plainLines(lines: unknown): string[] | null {
	if (!Array.isArray(lines)) return null;
	return lines.slice(0, MAX_SCREEN_LINES).map((l) => String(l).replace(ANSI, "").slice(0, MAX_SCREEN_LINE));
}

/** A dialog's record, every field bounded. */
export function newDialog(
	id: string,
	kind: Kind,
	title: unknown,
	options: unknown,
	remote: Remote,
	tool: ToolCall | null,
	at: number,
): DialogInfo {
	return {
		id,
		kind,
		title: bound(title),
		options: Array.isArray(options) ? options.slice(0, MAX_OPTIONS).map((o) => bound(String(o)) ?? "") : null,
		tool: tool ? bound(tool.name, MAX_NAME) : null,
		toolCallId: tool ? bound(tool.id, MAX_NAME) : null,
		toolInput: tool ? boundJson(tool.input) : null,
		outerToolCallId: tool?.outer ? bound(tool.outer, MAX_NAME) : null,
		at,
		remote,
		waits: kind !== "custom",
	};
}

export function dialogEvent(d: DialogInfo, where: Where, screen: string[] | null): Json {
	return {
		event: "dialog",
		id: d.id,
		kind: d.kind,
		title: d.title,
		options: d.options,
		tool: d.tool,
		tool_call_id: d.toolCallId,
		tool_input: d.toolInput,
		outer_tool_call_id: d.outerToolCallId,
		session_file: where.sessionFile,
		session_dir: where.sessionDir,
		cwd: where.cwd,
		pid: where.pid,
		at: d.at,
		remote: d.remote,
		screen,
		waits: d.waits,
	};
}

export function helloEvent(
	piVersion: string | null,
	sessionId: string | null,
	mode: Mode,
	where: Where,
	dialogs: Json[],
): Json {
	return {
		event: "hello",
		protocol: PROTOCOL,
		pi_version: piVersion,
		pid: where.pid,
		session_file: where.sessionFile,
		session_id: sessionId,
		session_dir: where.sessionDir,
		cwd: where.cwd,
		mode,
		dialogs,
	};
}

/** ``answer``: what the dialog returned (a choice, a text; a confirm's true/false: "Yes"/"No"). */
export function closedEvent(id: string, how: How, answer: unknown, timedOut: boolean): Json {
	const said = typeof answer === "boolean" ? (answer ? "Yes" : "No") : bound(answer);
	return { event: "closed", id, how, answer: said, timed_out: timedOut };
}

export function screenEvent(id: string, lines: string[]): Json {
	return { event: "screen", id, lines };
}

export function byeEvent(reason: unknown): Json {
	return { event: "bye", reason: typeof reason === "string" ? reason : null };
}

export type RequestName = "answer" | "keys";

export function resultEvent(request: RequestName | null, id: string | null, extra: Json): Json {
	return { event: "result", request, id, ...extra };
}

/** One line from a client. ``invalid``: replied to with that error; null: ignored. An answer or
 * keys request names a dialog (``id``, null when it did not say one); its body is checked against
 * the dialog (``keyList``, the answer's own checks). */
export type Request =
	| { kind: "hello" }
	| { kind: "answer"; id: string | null; hasValue: boolean; value: unknown }
	| { kind: "keys"; id: string | null; keys: unknown }
	| { kind: "invalid"; request: RequestName | null; id: string | null; error: string };

function isObject(value: unknown): value is Record<string, unknown> {
	return value !== null && typeof value === "object";
}

export function parseRequest(line: string): Request | null {
	let req: unknown;
	try {
		req = JSON.parse(line);
	} catch {
		return { kind: "invalid", request: null, id: null, error: "not JSON" };
	}
	if (!isObject(req)) return null;
	if (req.hello !== undefined) return { kind: "hello" };
	const request: RequestName | null = req.answer !== undefined ? "answer" : req.keys !== undefined ? "keys" : null;
	const body = request ? req[request] : null;
	const id = isObject(body) && typeof body.id === "string" ? body.id : null;
	if (!request || !isObject(body)) return { kind: "invalid", request, id, error: "unknown request" };
	if (request === "answer") return { kind: "answer", id, hasValue: "value" in body, value: body.value };
	return { kind: "keys", id, keys: body.keys };
}

/** A keys request's keys: at most MAX_KEYS strings, or null. */
export function keyList(keys: unknown): string[] | null {
	if (!Array.isArray(keys) || keys.length > MAX_KEYS) return null;
	const out: string[] = [];
	for (const k of keys) {
		if (typeof k !== "string") return null;
		out.push(k);
	}
	return out;
}

/** The lines of one client's stream; ``overflow`` once more than MAX_IN is buffered without a newline. */
export class LineReader {
	private buf = "";
	overflow = false;

	/** The complete, non-blank lines ``chunk`` ends. */
	push(chunk: string): string[] {
		this.buf += chunk;
		const lines: string[] = [];
		let nl: number;
		while ((nl = this.buf.indexOf("\n")) >= 0) {
			const line = this.buf.slice(0, nl);
			this.buf = this.buf.slice(nl + 1);
			if (line.trim()) lines.push(line);
		}
		if (this.buf.length > MAX_IN) this.overflow = true;
		return lines;
	}
}
