/**
 * pi's ctx.ui dialogs wrapped (select, confirm, input, editor, custom): each still shows as pi
 * shows it, and is also a Dialog (dialogs.ts) that clients see and may answer. And the model calls
 * extensions make, counted: a custom dialog opened for one is a loader, not a question. Wrapping
 * ctx.ui is not a documented pi API: feature-detected, and index.ts falls back to pi's prompt
 * events where it cannot be done.
 */

import type { ExtensionContext, ExtensionUIContext } from "@earendil-works/pi-coding-agent";
import {
	type CustomFactory,
	type CustomOptions,
	type DialogMethods,
	type Shown,
	isPromise,
	waitsForHuman,
} from "./components.ts";
import type { Dialogs, ModelCalls } from "./dialogs.ts";
import { MAX_IN, plainLines, screenEvent } from "./protocol.ts";

const ORIGINALS: unique symbol = Symbol.for("pi-notifier.ui-originals");
const MODEL_CALLS: unique symbol = Symbol.for("pi-notifier.model-calls");

type Registry = ExtensionContext["modelRegistry"];

export function wrapUi(ui: ExtensionUIContext | undefined, dialogs: Dialogs): boolean {
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
			return dialogs.answerable<string | undefined>(
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
			const cancelsBefore = dialogs.selectorCancels;
			return dialogs.answerable<boolean>(
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
				(v) => v === false && dialogs.selectorCancels > cancelsBefore,
			);
		};
		const input: DialogMethods["input"] = (title, placeholder, opts) =>
			dialogs.answerable<string | undefined>(
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
			const d = dialogs.open("editor", title, null, null);
			let result: Promise<string | undefined>;
			try {
				result = orig.editor.call(ui, title, prefill);
			} catch (err) {
				dialogs.close(d, "cancelled");
				throw err;
			}
			dialogs.announce(d);
			return Promise.resolve(result).then(
				(v) => {
					if (v === undefined) dialogs.close(d, "cancelled");
					else dialogs.close(d, "answered", v);
					return v;
				},
				(err) => {
					dialogs.close(d, "cancelled");
					throw err;
				},
			);
		};
		const custom = <T,>(factory: CustomFactory<T>, options?: CustomOptions): Promise<T> => {
			const d = dialogs.open("custom", null, null, "keys");
			const callsBefore = dialogs.modelCalls.started;
			// A model call the dialog's extension started since it opened is still under way: it
			// shows progress (a spinner of its own making, too), not a question.
			const busy = () => dialogs.modelCalls.started > callsBefore && dialogs.modelCalls.running > 0;
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
					dialogs.announce(d);
				}
			};
			d.keys = (keys) => {
				const c = component;
				if (!c || typeof c.handleInput !== "function") return "the dialog is not shown yet";
				dialogs.remoteDepth++;
				try {
					for (const key of keys) {
						if (!dialogs.isOpen(d)) break;
						c.handleInput(key);
					}
				} catch {
					return "the dialog failed to take the keys";
				} finally {
					dialogs.remoteDepth--;
				}
				return null;
			};
			const wrapped: CustomFactory<T> = (tui, theme, keybindings, done) => {
				const cols: unknown = tui?.terminal?.columns;
				if (typeof cols === "number" && cols > 0) width = cols;
				const myDone = (result: T) => {
					const none = result === undefined || result === null;
					dialogs.close(d, dialogs.remoteDepth > 0 ? "remote" : none ? "cancelled" : "answered", none ? null : result);
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
							if (dialogs.clients.listening() && dialogs.isOpen(d) && announced) {
								const plain = plainLines(lines);
								const joined = plain ? plain.join("\n") : "";
								if (plain && joined !== d.lastScreen) {
									d.lastScreen = joined;
									dialogs.clients.broadcast(screenEvent(d.id, plain));
								}
							}
							return lines;
						};
					}
					d.waits = waitsForHuman(c) && !busy();
					announced = true;
					dialogs.announce(d);
					return c;
				};
				return isPromise(made) ? made.then(adopt) : adopt(made);
			};
			let result: Promise<T>;
			try {
				const run: (f: CustomFactory<T>, o?: CustomOptions) => Promise<T> = orig.custom; // (pi's, for this T)
				result = run.call(ui, wrapped, options);
			} catch (err) {
				dialogs.close(d, "cancelled");
				throw err;
			}
			return Promise.resolve(result).then(
				(v) => {
					if (v === undefined || v === null) dialogs.close(d, "cancelled");
					else dialogs.close(d, "answered", v);
					return v;
				},
				(err) => {
					dialogs.close(d, "cancelled");
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

/** Count the model calls made through ``registry.complete`` (feature-detected; the registry is
 * pi's, shared by every extension: wrapped once, the counter replaced on reload). */
export function watchModelCalls(registry: Registry | undefined, modelCalls: ModelCalls): void {
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
