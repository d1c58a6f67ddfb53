// Loads the companion extension into a stand-in for pi (Node 22 strips the types), to test what a
// real pi cannot be made to do on demand: a ctx.ui that cannot be wrapped (the prompt-event
// fallback), and the extension's behaviour without a client. Commands on stdin, one per line:
//   start plain|frozen     session_start with a ui that can (plain) or cannot (frozen) be wrapped
//   prompt KIND TITLE      ui_prompt_start          | end        ui_prompt_end
//   select TITLE A,B       ctx.ui.select (the stand-in dialog waits; "resolve VALUE" answers it)
//   shutdown               session_shutdown
// Each command prints one JSON line: {"ok":true,...}; a settled select prints {"selected":VALUE}.
import * as readline from "node:readline";

const ext = (await import(process.argv[2])).default;
const handlers = new Map();
const pi = { on: (name, fn) => handlers.set(name, [...(handlers.get(name) ?? []), fn]) };
ext(pi);
const emit = async (name, event, ctx) => {
	for (const fn of handlers.get(name) ?? []) await fn(event, ctx);
};
const out = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

let pending = null;
const base = {
	select: (_title, _options, opts) =>
		new Promise((resolve) => {
			pending = resolve;
			opts?.signal?.addEventListener("abort", () => resolve(undefined));
		}),
	confirm: async () => false,
	input: async () => undefined,
	editor: async () => undefined,
	custom: async () => undefined,
	notify: () => {},
};
let ui = base;
const ctx = {
	hasUI: true,
	cwd: process.cwd(),
	get ui() {
		return ui;
	},
	sessionManager: { getSessionFile: () => "/nowhere/session.jsonl", getSessionId: () => "sid" },
};

for await (const line of readline.createInterface({ input: process.stdin })) {
	const [cmd, ...rest] = line.split(" ");
	if (cmd === "start") {
		ui = rest[0] === "frozen" ? Object.freeze({ ...base }) : { ...base };
		await emit("session_start", { type: "session_start", reason: "startup" }, ctx);
		out({ ok: true, wrapped: ui.select !== base.select });
	} else if (cmd === "prompt") {
		await emit("ui_prompt_start", { type: "ui_prompt_start", kind: rest[0], title: rest.slice(1).join(" ") }, ctx);
		out({ ok: true });
	} else if (cmd === "end") {
		await emit("ui_prompt_end", { type: "ui_prompt_end" }, ctx);
		out({ ok: true });
	} else if (cmd === "select") {
		ctx.ui.select(rest[0], rest[1].split(",")).then((v) => out({ selected: v ?? null }));
		out({ ok: true });
	} else if (cmd === "resolve") {
		pending?.(rest[0]);
		out({ ok: true });
	} else if (cmd === "shutdown") {
		await emit("session_shutdown", { type: "session_shutdown", reason: "quit" }, ctx);
		out({ ok: true });
	}
}
