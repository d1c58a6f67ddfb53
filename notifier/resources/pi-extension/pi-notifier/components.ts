/**
 * What the extension sees of pi's components: whether a custom dialog waits for a human (not a
 * loader), the callbacks it reads off pi's selectors, and the hook that sees pi's own selector and
 * input components as each is first drawn (start-up dialogs, and a confirm's Escape). Part of the
 * companion extension: index.ts is its entry point.
 */

import type { ExtensionUIContext, KeybindingsManager, Theme } from "@earendil-works/pi-coding-agent";
import type { Component, TUI } from "@earendil-works/pi-tui";

const STARTUP_HOOK: unique symbol = Symbol.for("pi-notifier.startup-hook");

/** The dialog methods of pi's ui that wrapUi replaces with its own (same types). */
export type DialogMethods = Pick<ExtensionUIContext, "select" | "confirm" | "input" | "editor" | "custom">;
/** What a ctx.ui.custom factory returns, as pi's ExtensionUIContext.custom types it. */
export type Shown = Component & { dispose?(): void };
export type CustomFactory<T> = (
	tui: TUI,
	theme: Theme,
	keybindings: KeybindingsManager,
	done: (result: T) => void,
) => Shown | Promise<Shown>;
export type CustomOptions = Parameters<ExtensionUIContext["custom"]>[1];

export function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
	return typeof (value as { then?: unknown } | null)?.then === "function";
}

// A component that shows progress, not a question: pi-tui's Loader, CancellableLoader and pi's
// BorderedLoader (which takes Escape only, to cancel). Known by class name: the extension and pi
// may hold different copies of the same module.
const LOADER = /^(Bordered|Cancellable)?Loader$/;

/** A component as this file looks into it. pi's Component type says what pi calls (render,
 * handleInput); children (pi-tui's Container) and the callbacks of pi's selector and input
 * components (private in pi's types: see hookStartupDialogs) are not in it, so they are read as
 * unknown and checked where used. */
export interface Seen {
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
export function callable(value: unknown): ((this: unknown, ...args: unknown[]) => unknown) | null {
	return typeof value === "function" ? (value as (this: unknown, ...args: unknown[]) => unknown) : null;
}

export function isObject(value: unknown): value is Seen & object {
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
export function waitsForHuman(c: unknown): boolean {
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


/**
 * pi's selector and input components, as each is first drawn (``onShown``). Dialogs pi shows before
 * it has a session (project trust at start-up, pi's own or an extension's project_trust handler,
 * which runs before ours may) use them through a ui of its own that no extension can wrap; and a
 * confirm's selector tells its Escape from its No. Not a documented pi API: feature-detected (the
 * components pi exports to extensions), installed once per process, the handler replaced on reload.
 */
export type StartupKind = "select" | "input";
export type OnShown = (component: Seen, kind: StartupKind) => void;
/** pi's exported component classes, as far as the hook uses them. */
interface Hookable {
	prototype?: { render?: unknown; [STARTUP_HOOK]?: true };
}

export async function hookStartupDialogs(onShown: OnShown): Promise<void> {
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
