/**
 * pi-notifier companion extension (optional; installed by `pi-notifier pi-extension install`).
 *
 * Tells pi-notifier about every blocking dialog of every extension (permission gates, question
 * tools, ...) and lets it answer them, over a user-only Unix socket in pi-notifier's runtime folder
 * (usually $XDG_RUNTIME_DIR/pi-notifier/ext-<pid>-<token>.sock, see runtimeDir; folder 0700 and ours, socket 0600).
 *
 * Protocol: one JSON object per line. On connect the server sends
 *   {"event":"hello","protocol":1,"pi_version","pid","session_file","session_id","session_dir","cwd","mode","dialogs":[dialog...]}
 * then, while connected,
 *   {"event":"dialog","id","kind","title","options","tool","tool_call_id","tool_input","session_file","session_dir","cwd","pid","at","remote","screen","waits"}
 *   {"event":"screen","id","lines"}              (a custom dialog's text changed)
 *   {"event":"closed","id","how":"answered|cancelled|remote","answer","timed_out"}
 *   {"event":"bye","reason"}                    (pi closes its session: quit, /new, /resume, /reload)
 * session_file is null before pi has a session (a start-up dialog such as project trust); waits is
 * false for a dialog not known to wait for a human (a loader shown while an extension calls the
 * model); it is announced again when that changes. answer: the choice or text the dialog returned
 * (confirm: "Yes"/"No"), null when none; timed_out: it closed by its timeout or abort signal.
 * and takes
 *   {"answer":{"id","value"}}   select: an option or null (cancel); confirm: true/false; input: text or null
 *   {"keys":{"id","keys":["\x1b[B","\r",...]}}   raw terminal input for a custom dialog
 *   {"hello":{}}                 send the hello again
 * each replied to with {"event":"result","request","id","ok":true|false,"error"?,"closed"?,"screen"?}.
 * An id that is unknown or already closed is refused and nothing is done.
 *
 * It never blocks or slows pi: nothing is sent when no one is connected, every socket error is
 * swallowed, buffers are bounded, and the server does not keep pi alive. Node's stdlib only (pi's
 * own packages are imported for their types, which pi and node strip).
 * Wrapping ctx.ui is not a documented pi API: it is feature-detected, and where it cannot be done
 * the ui_prompt_start/ui_prompt_end events (pi >= 0.84.4) still announce dialogs (not answerable).
 *
 * This file is pi's entry point: the events, the ctx.ui wrappers, the socket. The messages
 * themselves, their bounds and limits are protocol.ts (pure; unit tests: tests/extension/). Both
 * are type-checked against pi's ExtensionAPI: `make typecheck-ts` (tsconfig.json at the repo's top).
 */

import type {
	ExtensionAPI,
	ExtensionContext,
	ExtensionUIContext,
	ExtensionUIDialogOptions,
	KeybindingsManager,
	Theme,
} from "@earendil-works/pi-coding-agent";
import type { Component, TUI } from "@earendil-works/pi-tui";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import {
	type DialogInfo,
	type How,
	type Json,
	type Kind,
	LineReader,
	MAX_CLIENTS,
	MAX_IN,
	MAX_OUT,
	type Mode,
	type Remote,
	type Where,
	SOCKET_NAME,
	type ToolCall,
	byeEvent,
	closedEvent,
	dialogEvent,
	helloEvent,
	keyList,
	newDialog,
	parseRequest,
	plainLines,
	resultEvent,
	screenEvent,
	socketName,
} from "./protocol.ts";

const APP = "pi-notifier";
const ORIGINALS: unique symbol = Symbol.for("pi-notifier.ui-originals");
const STARTUP_HOOK: unique symbol = Symbol.for("pi-notifier.startup-hook");
const MODEL_CALLS: unique symbol = Symbol.for("pi-notifier.model-calls");

type DialogOptions = ExtensionUIDialogOptions;
/** The dialog methods of pi's ui that wrapUi replaces with its own (same types). */
type DialogMethods = Pick<ExtensionUIContext, "select" | "confirm" | "input" | "editor" | "custom">;
/** What a ctx.ui.custom factory returns, as pi's ExtensionUIContext.custom types it. */
type Shown = Component & { dispose?(): void };
type CustomFactory<T> = (
	tui: TUI,
	theme: Theme,
	keybindings: KeybindingsManager,
	done: (result: T) => void,
) => Shown | Promise<Shown>;
type CustomOptions = Parameters<ExtensionUIContext["custom"]>[1];

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
	return typeof (value as { then?: unknown } | null)?.then === "function";
}
type Registry = ExtensionContext["modelRegistry"];
/** The model calls extensions make through ctx.modelRegistry.complete (see watchModelCalls). */
interface ModelCalls {
	started: number;
	running: number;
	ended: () => void;
}

interface Dialog extends DialogInfo {
	answer?: (value: unknown) => string | null; // error text, or null when done
	keys?: (keys: string[]) => string | null;
	screen?: () => string[] | null;
	recheck?: () => void; // a custom dialog not known to wait: announce it if it waits now
	lastScreen?: string;
}

// A component that shows progress, not a question: pi-tui's Loader, CancellableLoader and pi's
// BorderedLoader (which takes Escape only, to cancel). Known by class name: the extension and pi
// may hold different copies of the same module.
const LOADER = /^(Bordered|Cancellable)?Loader$/;

/** A component as this file looks into it. pi's Component type says what pi calls (render,
 * handleInput); children (pi-tui's Container) and the callbacks of pi's selector and input
 * components (private in pi's types: see hookStartupDialogs) are not in it, so they are read as
 * unknown and checked where used. */
interface Seen {
	render?: unknown;
	handleInput?: unknown;
	children?: unknown;
	options?: unknown;
	baseTitle?: unknown;
	onSelectCallback?: unknown;
	onSubmitCallback?: unknown;
	onCancelCallback?: unknown;
}

/** A callback read from a component (Seen): the one place such an unknown is taken as a function. */
function callable(value: unknown): ((this: unknown, ...args: unknown[]) => unknown) | null {
	return typeof value === "function" ? (value as (this: unknown, ...args: unknown[]) => unknown) : null;
}

function isObject(value: unknown): value is Seen & object {
	return value !== null && typeof value === "object";
}

function classNames(obj: unknown): string[] {
	const names: string[] = [];
	let proto: unknown = isObject(obj) ? Object.getPrototypeOf(obj) : null;
	for (let i = 0; isObject(proto) && proto !== Object.prototype && i < 12; i++) {
		const name: unknown = (proto as { constructor?: { name?: unknown } }).constructor?.name;
		if (typeof name === "string") names.push(name);
		proto = Object.getPrototypeOf(proto);
	}
	return names;
}

function isLoader(c: unknown): boolean {
	return classNames(c).some((n) => LOADER.test(n));
}

function takesInput(c: unknown): boolean {
	return isObject(c) && typeof c.handleInput === "function";
}

/** Whether a custom dialog's component waits for a human: it takes input, it is not a loader, and
 * it is not a container of loaders and plain text (nothing in it but a loader takes input). */
function waitsForHuman(c: unknown): boolean {
	if (!takesInput(c) || isLoader(c)) return false;
	let loaders = 0;
	let inputs = 0;
	const walk = (node: unknown, depth: number) => {
		const kids = isObject(node) ? node.children : null;
		if (!Array.isArray(kids) || depth > 4) return;
		for (const kid of kids.slice(0, 100)) {
			if (isLoader(kid)) loaders++;
			else if (takesInput(kid)) inputs++;
			else walk(kid, depth + 1);
		}
	};
	walk(c, 0);
	return !(loaders > 0 && inputs === 0);
}

/** Where pi will write this pi's sessions, before it has a session manager to ask. */
function sessionDirGuess(): string {
	const argv = process.argv;
	for (let i = 0; i < argv.length - 1; i++) {
		if (argv[i] === "--session-dir") return path.resolve(argv[i + 1]);
	}
	const home = os.homedir();
	const expand = (p: string) => (p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : p);
	const flat = process.env.PI_CODING_AGENT_SESSION_DIR;
	if (flat) return path.resolve(expand(flat));
	const env = process.env.PI_CODING_AGENT_DIR;
	const agent = env ? path.resolve(expand(env)) : path.join(home, ".pi", "agent");
	try {
		const value: unknown = JSON.parse(fs.readFileSync(path.join(agent, "settings.json"), "utf8"))?.sessionDir;
		if (typeof value === "string" && value.trim()) return path.resolve(agent, expand(value.trim()));
	} catch {
		// no settings, or none readable: the default
	}
	return path.join(agent, "sessions");
}

/**
 * pi-notifier's runtime folder, chosen exactly as the Python side chooses it
 * (notifier/system/paths.py, runtime_dir): in a private $XDG_RUNTIME_DIR its "pi-notifier"; in a
 * shared one (/tmp in some set-ups: another user may have taken that name) "pi-notifier-<uid>",
 * where nobody else can move it away; else, or when that is not ours, "run" in the state folder.
 * A folder is used only if it is ours (see privateFolder); null: none is, nothing is served.
 */
function runtimeDir(): string | null {
	if (process.platform === "win32") return null;
	const uid = typeof process.getuid === "function" ? process.getuid() : -1;
	const candidates: string[] = [];
	const xdg = process.env.XDG_RUNTIME_DIR || "";
	if (xdg.startsWith("/")) {
		try {
			const st = fs.statSync(xdg); // (the variable may name a link: what it names is judged)
			const mode = st.mode & 0o7777;
			if (st.isDirectory() && st.uid === uid && (mode & 0o077) === 0) candidates.push(path.join(xdg, APP));
			else if (st.isDirectory() && (st.uid === 0 || st.uid === uid) && ((mode & 0o022) === 0 || (mode & 0o1000) !== 0))
				candidates.push(path.join(xdg, `${APP}-${uid}`));
		} catch {
			// fall through to the state folder
		}
	}
	const home = os.homedir();
	const state = (process.env.XDG_STATE_HOME || "").trim();
	if (process.platform === "darwin") candidates.push(path.join(home, "Library", "Application Support", APP, "run"));
	else candidates.push(path.join(state && path.isAbsolute(state) ? state : path.join(home, ".local", "state"), APP, "run"));
	for (const [i, dir] of candidates.entries()) {
		if (privateFolder(dir, i === candidates.length - 1)) return dir;
	}
	return null;
}

/**
 * A user-only folder of ours, or false: made 0700 when missing, then checked without following
 * links (a real folder owned by us, never a link); one others can read is made 0700 through a
 * descriptor of the very folder checked. Nothing is created or changed in a folder not ours.
 */
function privateFolder(dir: string, parents: boolean): boolean {
	try {
		if (parents) fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
		try {
			fs.mkdirSync(dir, { mode: 0o700 });
		} catch (err) {
			if ((err as NodeJS.ErrnoException).code !== "EEXIST") return false;
		}
		const st = fs.lstatSync(dir);
		const uid = typeof process.getuid === "function" ? process.getuid() : -1;
		if (st.isSymbolicLink() || !st.isDirectory() || (uid >= 0 && st.uid !== uid)) return false;
		if ((st.mode & 0o077) !== 0) {
			const c = fs.constants;
			const fd = fs.openSync(dir, c.O_RDONLY | c.O_DIRECTORY | c.O_NOFOLLOW);
			try {
				const now = fs.fstatSync(fd);
				if (now.ino !== st.ino || now.dev !== st.dev || now.uid !== st.uid) return false;
				fs.fchmodSync(fd, 0o700);
			} finally {
				fs.closeSync(fd);
			}
		}
		return true;
	} catch {
		return false;
	}
}

/** Remove sockets left behind by pi processes that died without cleaning up (SIGKILL). */
function sweepStale(dir: string): void {
	try {
		for (const name of fs.readdirSync(dir)) {
			const m = SOCKET_NAME.exec(name);
			if (!m || Number(m[1]) === process.pid) continue;
			try {
				process.kill(Number(m[1]), 0);
			} catch (err) {
				if ((err as NodeJS.ErrnoException).code === "ESRCH") fs.rmSync(path.join(dir, name), { force: true });
			}
		}
	} catch {
		// best effort
	}
}

let cachedVersion: string | null | undefined;
function piVersion(): string | null {
	if (cachedVersion !== undefined) return cachedVersion;
	cachedVersion = null;
	try {
		let dir = path.dirname(fs.realpathSync(process.argv[1] || ""));
		for (let i = 0; i < 6; i++) {
			const file = path.join(dir, "package.json");
			if (fs.existsSync(file)) {
				const pkg: { name?: unknown; version?: unknown } | null = JSON.parse(fs.readFileSync(file, "utf8"));
				if (typeof pkg?.name === "string" && pkg.name.endsWith("pi-coding-agent")) {
					cachedVersion = typeof pkg.version === "string" ? pkg.version : null;
					break;
				}
			}
			dir = path.dirname(dir);
		}
	} catch {
		// unknown
	}
	return cachedVersion;
}

/**
 * pi's selector and input components, as each is first drawn (``onShown``). Dialogs pi shows before
 * it has a session (project trust at start-up, pi's own or an extension's project_trust handler,
 * which runs before ours may) use them through a ui of its own that no extension can wrap; and a
 * confirm's selector tells its Escape from its No. Not a documented pi API: feature-detected (the
 * components pi exports to extensions), installed once per process, the handler replaced on reload.
 */
type StartupKind = "select" | "input";
type OnShown = (component: Seen, kind: StartupKind) => void;
/** pi's exported component classes, as far as the hook uses them. */
interface Hookable {
	prototype?: { render?: unknown; [STARTUP_HOOK]?: true };
}

async function hookStartupDialogs(onShown: OnShown): Promise<void> {
	const g = globalThis as { [STARTUP_HOOK]?: OnShown };
	g[STARTUP_HOOK] = onShown;
	let mod: { ExtensionSelectorComponent?: Hookable; ExtensionInputComponent?: Hookable } | null = null;
	for (const name of ["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"]) {
		try {
			mod = await import(name);
			break;
		} catch {
			// not this name
		}
	}
	const classes: [Hookable | undefined, StartupKind][] = [
		[mod?.ExtensionSelectorComponent, "select"],
		[mod?.ExtensionInputComponent, "input"],
	];
	for (const [cls, kind] of classes) {
		const proto = cls?.prototype;
		const inner = callable(proto?.render);
		if (!proto || !inner || proto[STARTUP_HOOK]) continue;
		proto.render = function (this: Seen, width: number) {
			try {
				g[STARTUP_HOOK]?.(this, kind);
			} catch {
				// never disturb pi
			}
			return inner.call(this, width);
		};
		Object.defineProperty(proto, STARTUP_HOOK, { value: true });
	}
}

export default async function piNotifier(pi: ExtensionAPI): Promise<void> {
	const token = crypto.randomBytes(4).toString("hex");
	const dialogs = new Map<string, Dialog>();
	const clients = new Set<net.Socket>();
	const running = new Map<string, { name: string; input: unknown }>();
	let counter = 0;
	let server: net.Server | null = null;
	let socketPath: string | null = null;
	let sessionFile: string | null = null;
	let sessionId: string | null = null;
	let sessionDir: string | null = null;
	let sessionStarted = false; // before session_start, start-up dialogs are caught by hookStartupDialogs
	let cwd: string | null = null;
	let mode: Mode = "events";
	let promptDialog: Dialog | null = null;
	let remoteDepth = 0; // > 0 while keys from a client are being fed to a component
	// Model calls extensions make through ctx.modelRegistry.complete: started so far, and under way
	// (a custom dialog opened for one is a loader, whatever its component: see busyWith)
	const modelCalls: ModelCalls = {
		started: 0,
		running: 0,
		ended: () => {
			for (const d of [...dialogs.values()]) d.recheck?.();
		},
	};

	// ---- output (never throws, never blocks) ----

	function send(sock: net.Socket, obj: Json): void {
		try {
			if (sock.destroyed) return;
			if (sock.writableLength > MAX_OUT) {
				sock.destroy();
				return;
			}
			sock.write(`${JSON.stringify(obj)}\n`);
		} catch {
			try {
				sock.destroy();
			} catch {
				// ignore
			}
		}
	}

	function broadcast(obj: Json): void {
		if (clients.size === 0) return;
		for (const sock of clients) send(sock, obj);
	}

	function where(): Where {
		return { sessionFile, sessionDir: sessionDir ?? sessionDirGuess(), cwd: cwd ?? process.cwd(), pid: process.pid };
	}

	function describe(d: Dialog): Json {
		let screen: string[] | null = null;
		if (d.screen) {
			screen = d.screen();
			if (screen) d.lastScreen = screen.join("\n");
		}
		return dialogEvent(d, where(), screen);
	}

	function hello(): Json {
		return helloEvent(piVersion(), sessionId, mode, where(), [...dialogs.values()].map(describe));
	}

	// ---- dialogs ----

	function open(kind: Kind, title: unknown, options: unknown, remote: Remote): Dialog {
		let tool: ToolCall | null = null;
		for (const [id, t] of running) tool = { id, ...t }; // the most recently started tool call
		const d: Dialog = newDialog(`${token}-${++counter}`, kind, title, options, remote, tool, Date.now());
		dialogs.set(d.id, d);
		return d;
	}

	function announce(d: Dialog): void {
		if (clients.size > 0 && dialogs.has(d.id)) broadcast(describe(d));
	}

	/** ``answer``: what the dialog returned (a choice, a text; confirm: "Yes"/"No"), null for none. */
	function close(d: Dialog, how: How, answer: unknown = null, timedOut = false): void {
		if (!dialogs.delete(d.id)) return;
		broadcast(closedEvent(d.id, how, answer, timedOut));
	}

	/** An abort signal that fires when the caller's does, so a dialog can be closed from here too. */
	function linked(opts: DialogOptions | undefined): { controller: AbortController; opts: DialogOptions } {
		const controller = new AbortController();
		const outer = opts?.signal;
		if (outer) {
			if (outer.aborted) controller.abort();
			else outer.addEventListener("abort", () => controller.abort(), { once: true });
		}
		return { controller, opts: { ...(opts ?? {}), signal: controller.signal } };
	}

	/** select / confirm / input: the original dialog, plus an exact answer from a client. A dialog
	 * that returns its "nothing" value (``none``) once its ``timeout`` ran out or its ``signal``
	 * aborted closed without a human answer: cancelled, timed out, whatever its kind. */
	function answerable<T>(
		kind: Kind,
		title: unknown,
		options: string[] | null,
		opts: DialogOptions | undefined,
		run: (opts: DialogOptions) => Promise<T>,
		accept: (value: unknown) => { ok: true; value: T } | { ok: false; error: string },
		none: (value: T) => boolean,
		cancelled: (value: T) => boolean,
	): Promise<T> {
		const d = open(kind, title, options, "value");
		const { controller, opts: inner } = linked(opts);
		const timeout = typeof opts?.timeout === "number" && opts.timeout > 0 ? opts.timeout : null;
		const outer = opts?.signal;
		let settled = false;
		return new Promise<T>((resolve, reject) => {
			d.answer = (raw) => {
				if (settled) return "dialog already closed";
				const got = accept(raw);
				if (!got.ok) return got.error;
				settled = true;
				if (got.value === undefined) close(d, "cancelled"); // (a client cancelled it)
				else close(d, "remote", got.value);
				controller.abort();
				resolve(got.value);
				return null;
			};
			let original: Promise<T>;
			try {
				original = run(inner);
			} catch (err) {
				settled = true;
				close(d, "cancelled");
				reject(err);
				return;
			}
			announce(d);
			original.then(
				(value) => {
					if (settled) return;
					settled = true;
					// (a countdown ends a few ms either side of the timeout: 100 ms of slack)
					const timedOut =
						none(value) && (outer?.aborted === true || (timeout !== null && Date.now() - d.at >= timeout - 100));
					if (timedOut || cancelled(value)) close(d, "cancelled", null, timedOut);
					else close(d, "answered", value);
					resolve(value);
				},
				(err) => {
					if (settled) return;
					settled = true;
					close(d, "cancelled");
					reject(err);
				},
			);
		});
	}

	/** Count the model calls made through ``registry.complete`` (feature-detected; the registry is
	 * pi's, shared by every extension: wrapped once, the counter replaced on reload). */
	function watchModelCalls(registry: Registry | undefined): void {
		try {
			if (!registry || typeof registry.complete !== "function") return;
			// (a mark of our own on pi's object: not in its type)
			const marked = registry as Registry & { [MODEL_CALLS]?: { counter: ModelCalls } };
			const seen = marked[MODEL_CALLS];
			if (seen) {
				seen.counter = modelCalls;
				return;
			}
			const state = { counter: modelCalls };
			const inner = registry.complete;
			const complete: Registry["complete"] = function (this: Registry, model, context, options) {
				const counter = state.counter;
				counter.started++;
				counter.running++;
				let done = false;
				const end = () => {
					if (done) return;
					done = true;
					counter.running--;
					try {
						counter.ended();
					} catch {
						// never disturb the caller
					}
				};
				try {
					const result = inner.call(this, model, context, options);
					// (typed a promise; anything else is let through, counted as ended)
					if (isPromise<unknown>(result)) result.then(end, end);
					else end();
					return result;
				} catch (err) {
					end();
					throw err;
				}
			};
			registry.complete = complete;
			Object.defineProperty(registry, MODEL_CALLS, { value: state, configurable: true, enumerable: false });
		} catch {
			// not counted then
		}
	}

	function wrapUi(ui: ExtensionUIContext | undefined): boolean {
		if (!ui || typeof ui !== "object" || typeof ui.select !== "function") return false;
		try {
			// After a reload the same object may still carry our previous wrappers: wrap the originals
			// (kept on pi's object under a symbol of ours: not in its type).
			const marked = ui as ExtensionUIContext & { [ORIGINALS]?: DialogMethods };
			const orig: DialogMethods = marked[ORIGINALS] ?? {
				select: ui.select,
				confirm: ui.confirm,
				input: ui.input,
				editor: ui.editor,
				custom: ui.custom,
			};
			if (
				typeof orig.select !== "function" ||
				typeof orig.confirm !== "function" ||
				typeof orig.input !== "function" ||
				typeof orig.editor !== "function" ||
				typeof orig.custom !== "function"
			)
				return false;
			const select: DialogMethods["select"] = (title, options, opts) => {
				const opts2 = Array.isArray(options) ? options.map(String) : [];
				return answerable<string | undefined>(
					"select",
					title,
					opts2,
					opts,
					(o) => orig.select.call(ui, title, options, o),
					(v) =>
						v === null
							? { ok: true, value: undefined }
							: typeof v === "string" && opts2.includes(v)
								? { ok: true, value: options[opts2.indexOf(v)] }
								: { ok: false, error: "not one of the options" },
					(v) => v === undefined,
					(v) => v === undefined,
				);
			};
			const confirm: DialogMethods["confirm"] = (title, message, opts) => {
				const text = message ? `${title}\n\n${message}` : title;
				// pi draws a confirm as a select of Yes / No and returns false for No and for Escape
				// alike: a selector cancelled meanwhile (see watchCancel) tells Escape
				const cancelsBefore = selectorCancels;
				return answerable<boolean>(
					"confirm",
					text,
					["Yes", "No"],
					opts,
					(o) => orig.confirm.call(ui, title, message, o),
					(v) =>
						typeof v === "boolean"
							? { ok: true, value: v }
							: v === "Yes" || v === "No"
								? { ok: true, value: v === "Yes" }
								: { ok: false, error: "confirm takes true or false" },
					(v) => v === false,
					(v) => v === false && selectorCancels > cancelsBefore,
				);
			};
			const input: DialogMethods["input"] = (title, placeholder, opts) =>
				answerable<string | undefined>(
					"input",
					title,
					null,
					opts,
					(o) => orig.input.call(ui, title, placeholder, o),
					(v) =>
						v === null
							? { ok: true, value: undefined }
							: typeof v === "string" && v.length <= MAX_IN
								? { ok: true, value: v }
								: { ok: false, error: "input takes a text or null" },
					(v) => v === undefined,
					(v) => v === undefined,
				);
			const editor: DialogMethods["editor"] = (title, prefill) => {
				const d = open("editor", title, null, null);
				let result: Promise<string | undefined>;
				try {
					result = orig.editor.call(ui, title, prefill);
				} catch (err) {
					close(d, "cancelled");
					throw err;
				}
				announce(d);
				return Promise.resolve(result).then(
					(v) => {
						if (v === undefined) close(d, "cancelled");
						else close(d, "answered", v);
						return v;
					},
					(err) => {
						close(d, "cancelled");
						throw err;
					},
				);
			};
			const custom = <T,>(factory: CustomFactory<T>, options?: CustomOptions): Promise<T> => {
				const d = open("custom", null, null, "keys");
				const callsBefore = modelCalls.started;
				// A model call the dialog's extension started since it opened is still under way: it
				// shows progress (a spinner of its own making, too), not a question.
				const busy = () => modelCalls.started > callsBefore && modelCalls.running > 0;
				let component: Shown | null = null;
				let innerRender: Shown["render"] | null = null;
				let width = 80;
				let announced = false;
				const render = (): string[] | null => {
					if (!component || !innerRender) return null;
					try {
						return plainLines(innerRender.call(component, width));
					} catch {
						return null;
					}
				};
				d.screen = render;
				d.recheck = () => {
					if (!d.waits && announced && component && waitsForHuman(component) && !busy()) {
						d.waits = true; // (a loader that became a question): announced again
						announce(d);
					}
				};
				d.keys = (keys) => {
					const c = component;
					if (!c || typeof c.handleInput !== "function") return "the dialog is not shown yet";
					remoteDepth++;
					try {
						for (const key of keys) {
							if (!dialogs.has(d.id)) break;
							c.handleInput(key);
						}
					} catch {
						return "the dialog failed to take the keys";
					} finally {
						remoteDepth--;
					}
					return null;
				};
				const wrapped: CustomFactory<T> = (tui, theme, keybindings, done) => {
					const cols: unknown = tui?.terminal?.columns;
					if (typeof cols === "number" && cols > 0) width = cols;
					const myDone = (result: T) => {
						const none = result === undefined || result === null;
						close(d, remoteDepth > 0 ? "remote" : none ? "cancelled" : "answered", none ? null : result);
						done(result);
					};
					const made = factory(tui, theme, keybindings, myDone);
					const adopt = (c: Shown): Shown => {
						component = c;
						if (c && typeof c.render === "function") {
							const inner = c.render;
							innerRender = inner;
							// Mirror what the terminal shows: pushed when it changes and someone listens.
							c.render = function (this: Shown, w: number) {
								const lines = inner.call(this, w);
								if (typeof w === "number" && w > 0) width = w;
								d.recheck?.();
								if (clients.size > 0 && dialogs.has(d.id) && announced) {
									const plain = plainLines(lines);
									const joined = plain ? plain.join("\n") : "";
									if (plain && joined !== d.lastScreen) {
										d.lastScreen = joined;
										broadcast(screenEvent(d.id, plain));
									}
								}
								return lines;
							};
						}
						d.waits = waitsForHuman(c) && !busy();
						announced = true;
						announce(d);
						return c;
					};
					return isPromise(made) ? made.then(adopt) : adopt(made);
				};
				let result: Promise<T>;
				try {
					const run: (f: CustomFactory<T>, o?: CustomOptions) => Promise<T> = orig.custom; // (pi's, for this T)
					result = run.call(ui, wrapped, options);
				} catch (err) {
					close(d, "cancelled");
					throw err;
				}
				return Promise.resolve(result).then(
					(v) => {
						if (v === undefined || v === null) close(d, "cancelled");
						else close(d, "answered", v);
						return v;
					},
					(err) => {
						close(d, "cancelled");
						throw err;
					},
				);
			};
			ui.select = select;
			ui.confirm = confirm;
			ui.input = input;
			ui.editor = editor;
			ui.custom = custom;
			if (ui.select !== select || ui.custom !== custom) return false;
			Object.defineProperty(ui, ORIGINALS, { value: orig, configurable: true, enumerable: false });
			return true;
		} catch {
			return false;
		}
	}

	// ---- pi's selector components (see hookStartupDialogs) ----

	// How many of pi's selectors were cancelled (Escape, or their countdown): a confirm whose
	// selector was cancelled while it was open was cancelled, not answered No.
	let selectorCancels = 0;
	const cancelWatched = new WeakSet<object>();

	function watchCancel(c: Seen): void {
		if (!isObject(c) || cancelWatched.has(c)) return;
		cancelWatched.add(c);
		const inner = callable(c.onCancelCallback);
		if (!inner) return;
		c.onCancelCallback = function (this: unknown, ...args: unknown[]) {
			selectorCancels++;
			return inner.apply(this, args);
		};
	}

	function shown(c: Seen, kind: StartupKind): void {
		if (kind === "select") watchCancel(c);
		startupDialog(c, kind);
	}

	// ---- start-up dialogs: before pi has a session ----

	const startupSeen = new WeakSet<object>();

	function startupDialog(c: Seen, kind: StartupKind): void {
		if (sessionStarted || !isObject(c) || startupSeen.has(c)) return;
		startupSeen.add(c);
		const okKey = kind === "select" ? "onSelectCallback" : "onSubmitCallback";
		const onOk = callable(c[okKey]);
		const onCancel = callable(c.onCancelCallback);
		if (!onOk || !onCancel) return;
		const options = kind === "select" && Array.isArray(c.options) ? c.options.map(String) : null;
		if (kind === "select" && !options) return;
		const d = open(kind, typeof c.baseTitle === "string" ? c.baseTitle : null, options, "value");
		d.waits = true;
		let remote = false;
		const ok = (value: unknown) => {
			close(d, remote ? "remote" : "answered", value);
			return onOk.call(c, value);
		};
		const cancel = () => {
			close(d, "cancelled");
			return onCancel.call(c);
		};
		c[okKey] = ok;
		c.onCancelCallback = cancel;
		d.answer = (raw) => {
			if (!dialogs.has(d.id)) return "dialog already closed";
			if (raw === null) {
				cancel();
				return null;
			}
			if (kind === "select" && !(typeof raw === "string" && options?.includes(raw))) return "not one of the options";
			if (kind === "input" && !(typeof raw === "string" && raw.length <= MAX_IN)) return "input takes a text or null";
			remote = true;
			ok(raw);
			return null;
		};
		start();
		announce(d);
	}

	// ---- requests from clients ----

	function handle(sock: net.Socket, line: string): void {
		const req = parseRequest(line);
		if (!req) return;
		if (req.kind === "invalid") {
			send(sock, resultEvent(req.request, req.id, { ok: false, error: req.error }));
			return;
		}
		if (req.kind === "hello") {
			send(sock, hello());
			return;
		}
		const reply = (extra: Json) => send(sock, resultEvent(req.kind, req.id, extra));
		const d = req.id ? dialogs.get(req.id) : undefined;
		if (!d) return reply({ ok: false, error: "unknown or closed dialog" });
		if (req.kind === "answer") {
			if (!d.answer) return reply({ ok: false, error: `a ${d.kind} dialog cannot be answered with a value` });
			if (!req.hasValue) return reply({ ok: false, error: "no value" });
			const error = d.answer(req.value);
			return reply(error ? { ok: false, error } : { ok: true, closed: true });
		}
		if (!d.keys) return reply({ ok: false, error: `a ${d.kind} dialog does not take keys` });
		const keys = keyList(req.keys);
		if (!keys) return reply({ ok: false, error: "keys must be a list of strings" });
		const error = d.keys(keys);
		if (error) return reply({ ok: false, error });
		const closed = !dialogs.has(d.id);
		reply({ ok: true, closed, screen: closed ? null : d.screen ? d.screen() : null });
	}

	function accept(sock: net.Socket): void {
		if (clients.size >= MAX_CLIENTS) {
			sock.destroy();
			return;
		}
		clients.add(sock);
		sock.unref();
		sock.setEncoding("utf8");
		const reader = new LineReader();
		sock.on("data", (chunk: string) => {
			try {
				for (const line of reader.push(chunk)) handle(sock, line);
				if (reader.overflow) sock.destroy();
			} catch {
				sock.destroy();
			}
		});
		const drop = () => clients.delete(sock);
		sock.on("error", drop);
		sock.on("close", drop);
		send(sock, hello());
	}

	// ---- the socket's life ----

	function cleanup(): void {
		if (socketPath) {
			try {
				fs.rmSync(socketPath, { force: true });
			} catch {
				// ignore
			}
		}
	}

	function start(): void {
		if (server) return;
		const dir = runtimeDir();
		if (!dir) return;
		sweepStale(dir);
		const file = path.join(dir, socketName(process.pid, token));
		try {
			const srv = net.createServer(accept);
			srv.on("error", () => stop());
			srv.listen(file, () => {
				try {
					fs.chmodSync(file, 0o600);
				} catch {
					stop();
				}
			});
			srv.unref();
			server = srv;
			socketPath = file;
			process.on("exit", cleanup);
		} catch {
			stop();
		}
	}

	function stop(): void {
		for (const sock of clients) {
			try {
				sock.destroy();
			} catch {
				// ignore
			}
		}
		clients.clear();
		if (server) {
			try {
				server.close();
			} catch {
				// ignore
			}
		}
		server = null;
		cleanup();
		socketPath = null;
		process.removeListener("exit", cleanup);
	}

	// ---- pi events ----

	pi.on("session_start", async (_event, ctx: ExtensionContext) => {
		try {
			sessionStarted = true;
			if (!ctx.hasUI) {
				stop(); // (a start-up dialog's socket, in a pi that turned out to have no UI)
				return;
			}
			sessionFile = ctx.sessionManager?.getSessionFile?.() ?? null;
			sessionId = ctx.sessionManager?.getSessionId?.() ?? null;
			const dir = ctx.sessionManager?.getSessionDir?.();
			sessionDir = typeof dir === "string" ? dir : null;
			cwd = ctx.cwd ?? process.cwd();
			mode = wrapUi(ctx.ui) ? "wrap" : "events";
			watchModelCalls(ctx.modelRegistry);
			if (server) broadcast(hello()); // (listening since a start-up dialog: it has a session now)
			start();
		} catch {
			// never disturb pi
		}
	});

	pi.on("session_shutdown", async (event) => {
		try {
			for (const d of [...dialogs.values()]) close(d, "cancelled");
			// (a connection lost without it: pi died, killed or crashed, in the middle of its session)
			broadcast(byeEvent(event?.reason));
			running.clear();
			stop();
		} catch {
			// ignore
		}
	});

	pi.on("tool_execution_start", async (event) => {
		if (event && typeof event.toolCallId === "string")
			running.set(event.toolCallId, { name: String(event.toolName), input: event.args });
	});
	pi.on("tool_call", async (event) => {
		const t = event && running.get(event.toolCallId);
		if (t) t.input = event.input;
		else if (event && typeof event.toolCallId === "string")
			running.set(event.toolCallId, { name: String(event.toolName), input: event.input });
	});
	pi.on("tool_execution_end", async (event) => {
		if (event) running.delete(event.toolCallId);
	});
	pi.on("agent_end", async () => running.clear());

	// Fallback where ctx.ui cannot be wrapped: the prompt events only (no options, not answerable).
	pi.on("ui_prompt_start", async (event) => {
		if (mode !== "events" || !event) return;
		if (promptDialog) close(promptDialog, "answered");
		promptDialog = open(event.kind, event.title ?? null, null, null);
		announce(promptDialog);
	});
	pi.on("ui_prompt_end", async () => {
		if (mode !== "events" || !promptDialog) return;
		close(promptDialog, "answered");
		promptDialog = null;
	});

	// (last: every handler above is registered before the factory first awaits)
	try {
		await hookStartupDialogs(shown);
	} catch {
		// no start-up dialogs then
	}
}
