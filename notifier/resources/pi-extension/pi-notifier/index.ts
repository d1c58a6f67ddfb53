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
 *   {"event":"dialog","id","kind","title","options","tool","tool_call_id","tool_input","outer_tool_call_id","session_file","session_dir","cwd","pid","at","remote","screen","waits"}
 *   {"event":"screen","id","lines"}              (a custom dialog's text changed)
 *   {"event":"closed","id","how":"answered|cancelled|remote","answer","timed_out"}
 *   {"event":"bye","reason"}                    (pi closes its session: quit, /new, /resume, /reload)
 * outer_tool_call_id: when the tool call the dialog opened for is a nested one (a codemode script's
 * tool call), the model's own call it runs under (the one in the session file); else null.
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
 * This file is pi's entry point: pi's events, and the parts put together. The parts: protocol.ts
 * (the messages, their bounds and limits; pure; unit tests: tests/extension/), dialogs.ts (the
 * dialogs shown, answered, closed), wrap.ts (pi's ctx.ui wrapped, model calls counted),
 * components.ts (what is seen of pi's components; the start-up hook), server.ts (the socket) and
 * places.ts (folders, pi's version). All are type-checked against pi's ExtensionAPI:
 * `make typecheck-ts` (tsconfig.json at the repo's top).
 */

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import * as crypto from "node:crypto";
import { type Seen, type StartupKind, hookStartupDialogs } from "./components.ts";
import { type Dialog, Dialogs } from "./dialogs.ts";
import { piVersion, sessionDirGuess } from "./places.ts";
import { type Json, type Mode, type Where, byeEvent, helloEvent } from "./protocol.ts";
import { Server } from "./server.ts";
import { watchModelCalls, wrapUi } from "./wrap.ts";

export default async function piNotifier(pi: ExtensionAPI): Promise<void> {
	const token = crypto.randomBytes(4).toString("hex");
	let sessionFile: string | null = null;
	let sessionId: string | null = null;
	let sessionDir: string | null = null;
	let sessionStarted = false; // before session_start, start-up dialogs are caught by hookStartupDialogs
	let cwd: string | null = null;
	let mode: Mode = "events";
	let promptDialog: Dialog | null = null;

	const where = (): Where => ({
		sessionFile,
		sessionDir: sessionDir ?? sessionDirGuess(),
		cwd: cwd ?? process.cwd(),
		pid: process.pid,
	});
	const hello = (): Json =>
		helloEvent(piVersion(), sessionId, mode, where(), dialogs.all().map((d: Dialog) => dialogs.describe(d)));
	const server: Server = new Server(token, hello, (req): Json => dialogs.request(req));
	const dialogs: Dialogs = new Dialogs(token, server, where);

	// pi's selector and input components as each is first drawn: a confirm's Escape is counted,
	// and before pi has a session, its start-up dialogs (project trust) are served
	function shown(c: Seen, kind: StartupKind): void {
		if (kind === "select") dialogs.watchCancel(c);
		if (sessionStarted) return;
		const d = dialogs.fromStartup(c, kind);
		if (!d) return;
		server.start();
		dialogs.announce(d);
	}

	pi.on("session_start", async (_event, ctx: ExtensionContext) => {
		try {
			sessionStarted = true;
			if (!ctx.hasUI) {
				server.stop(); // (a start-up dialog's socket, in a pi that turned out to have no UI)
				return;
			}
			sessionFile = ctx.sessionManager?.getSessionFile?.() ?? null;
			sessionId = ctx.sessionManager?.getSessionId?.() ?? null;
			const dir = ctx.sessionManager?.getSessionDir?.();
			sessionDir = typeof dir === "string" ? dir : null;
			cwd = ctx.cwd ?? process.cwd();
			mode = wrapUi(ctx.ui, dialogs) ? "wrap" : "events";
			watchModelCalls(ctx.modelRegistry, dialogs.modelCalls);
			if (server.serving) server.broadcast(hello()); // (listening since a start-up dialog: it has a session now)
			server.start();
		} catch {
			// never disturb pi
		}
	});

	pi.on("session_shutdown", async (event) => {
		try {
			dialogs.closeAll();
			// (a connection lost without it: pi died, killed or crashed, in the middle of its session)
			server.broadcast(byeEvent(event?.reason));
			dialogs.running.clear();
			server.stop();
		} catch {
			// ignore
		}
	});

	const running = dialogs.running;
	// (parent: the call that made a nested one, as a codemode script makes its tools' calls)
	const parentOf = (event: { parentToolCallId?: unknown }): string | undefined =>
		typeof event.parentToolCallId === "string" ? event.parentToolCallId : undefined;
	pi.on("tool_execution_start", async (event) => {
		if (event && typeof event.toolCallId === "string")
			running.set(event.toolCallId, { name: String(event.toolName), input: event.args, parent: parentOf(event) });
	});
	pi.on("tool_call", async (event) => {
		const t = event && running.get(event.toolCallId);
		if (t) t.input = event.input;
		else if (event && typeof event.toolCallId === "string")
			running.set(event.toolCallId, { name: String(event.toolName), input: event.input, parent: parentOf(event) });
	});
	pi.on("tool_execution_end", async (event) => {
		if (event) running.delete(event.toolCallId);
	});
	pi.on("agent_end", async () => running.clear());

	// Fallback where ctx.ui cannot be wrapped: the prompt events only (no options, not answerable).
	pi.on("ui_prompt_start", async (event) => {
		if (mode !== "events" || !event) return;
		if (promptDialog) dialogs.close(promptDialog, "answered");
		promptDialog = dialogs.open(event.kind, event.title ?? null, null, null);
		dialogs.announce(promptDialog);
	});
	pi.on("ui_prompt_end", async () => {
		if (mode !== "events" || !promptDialog) return;
		dialogs.close(promptDialog, "answered");
		promptDialog = null;
	});

	// (last: every handler above is registered before the factory first awaits)
	try {
		await hookStartupDialogs(shown);
	} catch {
		// no start-up dialogs then
	}
}
