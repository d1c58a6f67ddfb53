/**
 * The dialogs this pi shows, as the companion extension tells them: each one opened, announced to
 * the clients, answered from a client and closed, exactly once. wrap.ts makes them from pi's
 * ctx.ui methods, fromStartup from pi's own selectors before it has a session; a client's request
 * is carried out by request. index.ts is the extension's entry point.
 */

import type { ExtensionUIDialogOptions } from "@earendil-works/pi-coding-agent";
import { type Seen, type StartupKind, callable, isObject } from "./components.ts";
import {
	type DialogInfo,
	type How,
	type Json,
	type Kind,
	MAX_IN,
	type Remote,
	type Request,
	type ToolCall,
	type Where,
	closedEvent,
	dialogEvent,
	keyList,
	newDialog,
	resultEvent,
} from "./protocol.ts";

export type DialogOptions = ExtensionUIDialogOptions;

export interface Dialog extends DialogInfo {
	answer?: (value: unknown) => string | null; // error text, or null when done
	keys?: (keys: string[]) => string | null;
	screen?: () => string[] | null;
	recheck?: () => void; // a custom dialog not known to wait: announce it if it waits now
	lastScreen?: string;
}

/** The model calls extensions make through ctx.modelRegistry.complete (see watchModelCalls). */
export interface ModelCalls {
	started: number;
	running: number;
	ended: () => void;
}

/** Where the dialogs are told: the clients of the socket (server.ts). */
export interface Clients {
	listening(): boolean;
	broadcast(obj: Json): void;
}

export class Dialogs {
	private readonly shown = new Map<string, Dialog>();
	private counter = 0;
	/** The tool calls under way (the most recent one is the tool a dialog opened for); ``parent``:
	 * the call that made a nested one (pi's parentToolCallId). */
	readonly running = new Map<string, { name: string; input: unknown; parent?: string }>();
	/** > 0 while keys from a client are being fed to a component. */
	remoteDepth = 0;
	/** How many of pi's selectors were cancelled (Escape, or their countdown): a confirm whose
	 * selector was cancelled while it was open was cancelled, not answered No. */
	selectorCancels = 0;
	/** Model calls extensions make through ctx.modelRegistry.complete: started so far, and under
	 * way (a custom dialog opened for one is a loader, whatever its component: see wrap.ts). */
	readonly modelCalls: ModelCalls = {
		started: 0,
		running: 0,
		ended: () => {
			for (const d of this.all()) d.recheck?.();
		},
	};
	private readonly cancelWatched = new WeakSet<object>();
	private readonly startupSeen = new WeakSet<object>();

	private readonly token: string;
	readonly clients: Clients;
	private readonly where: () => Where;

	/** ``token``: this pi's part of every dialog id; ``where``: this pi's place (its session). */
	constructor(token: string, clients: Clients, where: () => Where) {
		this.token = token;
		this.clients = clients;
		this.where = where;
	}

	all(): Dialog[] {
		return [...this.shown.values()];
	}

	isOpen(d: Dialog): boolean {
		return this.shown.has(d.id);
	}

	describe(d: Dialog): Json {
		let screen: string[] | null = null;
		if (d.screen) {
			screen = d.screen();
			if (screen) d.lastScreen = screen.join("\n");
		}
		return dialogEvent(d, this.where(), screen);
	}

	open(kind: Kind, title: unknown, options: unknown, remote: Remote): Dialog {
		let tool: ToolCall | null = null;
		for (const [id, t] of this.running) tool = { id, name: t.name, input: t.input }; // the most recently started
		// A nested call (a codemode script's): the dialog is also the question of the model's own call
		// it runs under, the only one in the session file while it runs.
		let outer = tool ? this.running.get(tool.id)?.parent : undefined;
		for (let i = 0; outer !== undefined && i < 16; i++) {
			const up = this.running.get(outer)?.parent;
			if (up === undefined) break;
			outer = up;
		}
		if (tool && outer !== undefined) tool.outer = outer;
		const d: Dialog = newDialog(`${this.token}-${++this.counter}`, kind, title, options, remote, tool, Date.now());
		this.shown.set(d.id, d);
		return d;
	}

	announce(d: Dialog): void {
		if (this.clients.listening() && this.shown.has(d.id)) this.clients.broadcast(this.describe(d));
	}

	/** ``answer``: what the dialog returned (a choice, a text; confirm: "Yes"/"No"), null for none. */
	close(d: Dialog, how: How, answer: unknown = null, timedOut = false): void {
		if (!this.shown.delete(d.id)) return;
		this.clients.broadcast(closedEvent(d.id, how, answer, timedOut));
	}

	closeAll(): void {
		for (const d of this.all()) this.close(d, "cancelled");
	}

	/** A client's answer or keys (parsed: protocol.ts); the reply to send it. */
	request(req: Exclude<Request, { kind: "invalid" | "hello" }>): Json {
		const reply = (extra: Json) => resultEvent(req.kind, req.id, extra);
		const d = req.id ? this.shown.get(req.id) : undefined;
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
		const closed = !this.shown.has(d.id);
		return reply({ ok: true, closed, screen: closed ? null : d.screen ? d.screen() : null });
	}

	/** pi's selector ``c`` was drawn: its cancel is counted (see selectorCancels). */
	watchCancel(c: Seen): void {
		if (!isObject(c) || this.cancelWatched.has(c)) return;
		this.cancelWatched.add(c);
		const inner = callable(c.onCancelCallback);
		if (!inner) return;
		const dialogs = this;
		c.onCancelCallback = function (this: unknown, ...args: unknown[]) {
			dialogs.selectorCancels++;
			return inner.apply(this, args);
		};
	}

	/** A dialog pi shows before it has a session (pi's own selector or input component ``c``, first
	 * drawn): opened, answerable through its callbacks; null when it is not one (already seen, or
	 * without the callbacks). The caller announces it once it listens. */
	fromStartup(c: Seen, kind: StartupKind): Dialog | null {
		if (!isObject(c) || this.startupSeen.has(c)) return null;
		this.startupSeen.add(c);
		const okKey = kind === "select" ? "onSelectCallback" : "onSubmitCallback";
		const onOk = callable(c[okKey]);
		const onCancel = callable(c.onCancelCallback);
		if (!onOk || !onCancel) return null;
		const options = kind === "select" && Array.isArray(c.options) ? c.options.map(String) : null;
		if (kind === "select" && !options) return null;
		const d = this.open(kind, typeof c.baseTitle === "string" ? c.baseTitle : null, options, "value");
		d.waits = true;
		let remote = false;
		const ok = (value: unknown) => {
			this.close(d, remote ? "remote" : "answered", value);
			return onOk.call(c, value);
		};
		const cancel = () => {
			this.close(d, "cancelled");
			return onCancel.call(c);
		};
		c[okKey] = ok;
		c.onCancelCallback = cancel;
		d.answer = (raw) => {
			if (!this.shown.has(d.id)) return "dialog already closed";
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
		return d;
	}

	/** select / confirm / input: the original dialog (``run``), plus an exact answer from a client
	 * (``accept`` checks it). A dialog that returns its "nothing" value (``none``) once its
	 * ``timeout`` ran out or its ``signal`` aborted closed without a human answer: cancelled, timed
	 * out, whatever its kind. */
	answerable<T>(
		kind: Kind,
		title: unknown,
		options: string[] | null,
		opts: DialogOptions | undefined,
		run: (opts: DialogOptions) => Promise<T>,
		accept: (value: unknown) => { ok: true; value: T } | { ok: false; error: string },
		none: (value: T) => boolean,
		cancelled: (value: T) => boolean,
	): Promise<T> {
		const d = this.open(kind, title, options, "value");
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
				if (got.value === undefined) this.close(d, "cancelled"); // (a client cancelled it)
				else this.close(d, "remote", got.value);
				controller.abort();
				resolve(got.value);
				return null;
			};
			let original: Promise<T>;
			try {
				original = run(inner);
			} catch (err) {
				settled = true;
				this.close(d, "cancelled");
				reject(err);
				return;
			}
			this.announce(d);
			original.then(
				(value) => {
					if (settled) return;
					settled = true;
					// (a countdown ends a few ms either side of the timeout: 100 ms of slack)
					const timedOut =
						none(value) && (outer?.aborted === true || (timeout !== null && Date.now() - d.at >= timeout - 100));
					if (timedOut || cancelled(value)) this.close(d, "cancelled", null, timedOut);
					else this.close(d, "answered", value);
					resolve(value);
				},
				(err) => {
					if (settled) return;
					settled = true;
					this.close(d, "cancelled");
					reject(err);
				},
			);
		});
	}
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
