// Loads the companion extension into a stand-in for pi (Node 22 strips the types), to test what a
// real pi cannot be made to do on demand: a ctx.ui that cannot be wrapped (the prompt-event
// fallback), and the extension's behaviour without a client. Commands on stdin, one per line:
//   start plain|frozen     session_start with a ui that can (plain) or cannot (frozen) be wrapped
//   prompt KIND TITLE      ui_prompt_start          | end        ui_prompt_end
//   select TITLE A,B       ctx.ui.select (the stand-in dialog waits; "resolve VALUE" answers it)
//   timed MS               ctx.ui.select("Pick", [A, B], {timeout: MS}): closes itself after MS
//   custom KIND            ctx.ui.custom with a component: loader (a BorderedLoader), question (takes
//                          input), busy (takes input; its factory calls ctx.modelRegistry.complete),
//                          text (takes no input)
//   render                 the open custom component is drawn   | model   the model call returns
//   done VALUE             the custom dialog closes with VALUE
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
let shown = null; // the open custom dialog: {component, done}
let model = null; // the model call under way
const base = {
	select: (_title, _options, opts) =>
		new Promise((resolve) => {
			pending = resolve;
			opts?.signal?.addEventListener("abort", () => resolve(undefined));
			if (opts?.timeout) setTimeout(() => resolve(undefined), opts.timeout);
		}),
	confirm: async () => false,
	input: async () => undefined,
	editor: async () => undefined,
	custom: (factory) =>
		new Promise((resolve) => {
			const component = factory({ terminal: { columns: 80 } }, {}, {}, resolve);
			shown = { component, done: resolve };
		}),
	notify: () => {},
};
class BorderedLoader {
	handleInput() {}
	render() {
		return ["⠋ Working..."];
	}
}
class Picker {
	handleInput() {}
	render() {
		return ["> 1. A", "  2. B"];
	}
}
class Spinner extends Picker {}
class Banner {
	render() {
		return ["Done."];
	}
}
let ui = base;
const ctx = {
	hasUI: true,
	cwd: process.cwd(),
	get ui() {
		return ui;
	},
	sessionManager: { getSessionFile: () => "/nowhere/session.jsonl", getSessionId: () => "sid" },
	modelRegistry: { complete: () => new Promise((resolve) => (model = resolve)) },
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
	} else if (cmd === "timed") {
		ctx.ui.select("Pick", ["A", "B"], { timeout: Number(rest[0]) }).then((v) => out({ selected: v ?? null }));
		out({ ok: true });
	} else if (cmd === "custom") {
		const kinds = { loader: BorderedLoader, question: Picker, busy: Spinner, text: Banner };
		ctx.ui.custom((_tui, _theme, _kb, _done) => {
			if (rest[0] === "busy") void ctx.modelRegistry.complete();
			return new kinds[rest[0]]();
		});
		out({ ok: true });
	} else if (cmd === "render") {
		shown?.component.render(80);
		out({ ok: true });
	} else if (cmd === "model") {
		model?.({ content: [] });
		await Promise.resolve();
		out({ ok: true });
	} else if (cmd === "done") {
		shown?.done(rest[0]);
		out({ ok: true });
	} else if (cmd === "resolve") {
		pending?.(rest[0]);
		out({ ok: true });
	} else if (cmd === "shutdown") {
		await emit("session_shutdown", { type: "session_shutdown", reason: "quit" }, ctx);
		out({ ok: true });
	}
}
