/**
 * A stand-in for pi-ask's `ask_user_question` tool (@nguyenquangthai/pi-ask 0.1.9, which the npm
 * registry here does not serve), for the live tests of `pi-notifier answer`. Written from what
 * pi-ask is documented and seen to do, not from its code: the same screen and the same keys.
 *
 * Screen: a rule; a tab bar (" Header " per question shown, then " Submit ") when more than one
 * question is shown; the question; "Choose one" / "Choose any that apply" / "Optional — press
 * Enter to skip"; the option rows ("> " on the cursor's), recommended ones first with
 * " (Recommended)"; "Other — add your own answer"; the help line. The last tab is "Review your
 * answers" with "Press Enter to submit" once every question shown is confirmed.
 * Keys: Up/Down move; Space selects (toggles, multi-select); Enter on a row selects and confirms
 * it (multi-select: adds the row, then confirms; optional with nothing chosen: skips); Enter or
 * Space on "Other" opens an editor, whose Enter saves the text, and Enter on "Other" with a text
 * confirms it; confirming moves to the next question shown (showWhen), then to the review, where
 * Enter submits; Left/Right/Tab change tabs; Esc dismisses.
 */
import { Editor, Key, matchesKey, truncateToWidth } from "@earendil-works/pi-tui";
import { Type } from "typebox";

type Opt = { value: string; label: string; description?: string; recommended?: boolean };
type Q = {
	id: string;
	header: string;
	question: string;
	multiSelect?: boolean;
	required?: boolean;
	showWhen?: { questionId: string; equals: string };
	options: Opt[];
};
type A = { cursor: number; picked: number[]; custom?: string; confirmed: boolean };

const OTHER = "Other — add your own answer";

export default function askStandIn(pi: any) {
	pi.registerTool({
		name: "ask_user_question",
		label: "Ask",
		description: "Ask the user structured questions.",
		parameters: Type.Object({ questions: Type.Array(Type.Any()) }),
		async execute(_id: string, params: { questions: Q[] }, _signal: unknown, _update: unknown, ctx: any) {
			const qs: Q[] = params.questions.map((q) => ({
				...q,
				options: [...q.options.filter((o) => o.recommended), ...q.options.filter((o) => !o.recommended)],
			}));
			const result = await ctx.ui.custom((tui: any, theme: any, _kb: unknown, done: (r: unknown) => void) => {
				const answers: A[] = qs.map(() => ({ cursor: 0, picked: [], confirmed: false }));
				let tab = 0;
				let editing = false;
				const editor = new Editor(tui, {
					borderColor: (s: string) => s,
					selectList: {
						selectedPrefix: (s: string) => s,
						selectedText: (s: string) => s,
						description: (s: string) => s,
						scrollInfo: (s: string) => s,
						noMatch: (s: string) => s,
					},
				});
				editor.disableSubmit = true;
				const shown = (i: number): boolean => {
					const w = qs[i].showWhen;
					if (!w) return true;
					const p = qs.findIndex((q) => q.id === w.questionId);
					if (p < 0 || !answers[p].confirmed) return false;
					const k = qs[p].options.findIndex((o) => o.value === w.equals);
					return k >= 0 && answers[p].picked.includes(k);
				};
				const visible = () => qs.map((_, i) => i).filter(shown);
				const next = (from: number) => {
					for (let i = from + 1; i < qs.length; i++) if (shown(i)) return i;
					return qs.length;
				};
				const canSubmit = () => visible().every((i) => answers[i].confirmed);
				const redraw = () => tui.requestRender();
				const confirm = () => {
					const a = answers[tab];
					if (a.picked.length === 0 && !a.custom && qs[tab].required !== false) return;
					a.confirmed = true;
					tab = next(tab);
				};
				const result = () => ({
					version: 1,
					status: "submitted",
					answers: visible()
						.filter((i) => answers[i].confirmed && (answers[i].picked.length > 0 || answers[i].custom))
						.map((i) => ({
							questionId: qs[i].id,
							selectedValues: qs[i].options.filter((_, k) => answers[i].picked.includes(k)).map((o) => o.value),
							...(answers[i].custom ? { customText: answers[i].custom } : {}),
						})),
				});
				const handleInput = (data: string) => {
					if (editing) {
						if (matchesKey(data, Key.escape)) editing = false;
						else if (matchesKey(data, Key.enter)) {
							const text = editor.getText().trim();
							answers[tab].custom = text || undefined;
							answers[tab].confirmed = false;
							if (!qs[tab].multiSelect) answers[tab].picked = [];
							editor.setText("");
							editing = false;
						} else editor.handleInput(data);
						return redraw();
					}
					if (matchesKey(data, Key.escape)) return done(null);
					const tabs = [...visible(), qs.length];
					if (matchesKey(data, Key.left) || matchesKey(data, Key.right) || matchesKey(data, Key.tab)) {
						const at = Math.max(0, tabs.indexOf(tab));
						tab = tabs[(at + (matchesKey(data, Key.left) ? -1 : 1) + tabs.length) % tabs.length];
						return redraw();
					}
					if (tab === qs.length) {
						if (matchesKey(data, Key.enter) && canSubmit()) done(result());
						return;
					}
					const q = qs[tab];
					const a = answers[tab];
					if (matchesKey(data, Key.up)) a.cursor = Math.max(0, a.cursor - 1);
					else if (matchesKey(data, Key.down)) a.cursor = Math.min(q.options.length, a.cursor + 1);
					else if (a.cursor === q.options.length) {
						if (matchesKey(data, Key.enter) && a.custom) confirm();
						else if (matchesKey(data, Key.enter) || matchesKey(data, Key.space)) {
							editing = true;
							editor.setText(a.custom ?? "");
						}
					} else if (matchesKey(data, Key.space)) {
						a.confirmed = false;
						if (!q.multiSelect) a.picked = [a.cursor];
						else if (a.picked.includes(a.cursor)) a.picked = a.picked.filter((k) => k !== a.cursor);
						else a.picked = [...a.picked, a.cursor];
					} else if (matchesKey(data, Key.enter)) {
						if (q.multiSelect) {
							if (!a.picked.includes(a.cursor)) a.picked = [...a.picked, a.cursor];
						} else if (!(q.required === false && a.picked.length === 0 && !a.custom)) {
							a.picked = [a.cursor];
							a.custom = undefined;
						}
						confirm();
					}
					redraw();
				};
				const render = (width: number): string[] => {
					const lines: string[] = [];
					const add = (s = "") => lines.push(truncateToWidth(s, Math.max(1, width), ""));
					const rule = "─".repeat(Math.max(1, width));
					add(rule);
					const vis = visible();
					if (vis.length > 1) {
						add(` ${[...vis.map((i) => ` ${qs[i].header} `), " Submit "].join(" ")}`);
						add();
					}
					if (tab === qs.length) {
						add("Review your answers");
						add();
						vis.forEach((i, n) => {
							add(` ${n + 1}. ${qs[i].header}: ${qs[i].question}`);
							const labels = answers[i].picked.map((k) => qs[i].options[k].label).join(", ");
							const text = [labels, answers[i].custom].filter(Boolean).join("; ");
							if (text) add(`    ${text}`);
							else if (answers[i].confirmed) add("    Skipped");
						});
						add();
						if (canSubmit()) add(" Press Enter to submit");
						add(" ←→/Tab tabs  •  Enter submit  •  Esc dismiss");
						add(rule);
						return lines;
					}
					const q = qs[tab];
					const a = answers[tab];
					add(` ${q.question}`);
					add(` ${q.required === false ? "Optional — press Enter to skip" : q.multiSelect ? "Choose any that apply" : "Choose one"}`);
					add();
					q.options.forEach((o, k) => {
						add(`${a.cursor === k ? "> " : "  "}${o.label}${o.recommended ? " (Recommended)" : ""}`);
						if (o.description) add(`    ${o.description}`);
					});
					add(`${a.cursor === q.options.length ? "> " : "  "}${OTHER}${a.custom ? `: ${a.custom}` : ""}`);
					if (editing) {
						add();
						add(" Your answer:");
						for (const line of editor.render(Math.max(1, width - 2))) add(` ${line}`);
					}
					add();
					if (editing) add(" Enter to save  •  Esc to cancel");
					else if (vis.length === 1) add(" ↑↓ navigate  •  Space select/toggle  •  Enter confirm  •  Esc dismiss");
					else add(" ↑↓ navigate  •  Space select/toggle  •  Enter confirm  •  ←→/Tab tabs  •  Esc dismiss");
					add(rule);
					return lines;
				};
				return { render, invalidate: () => {}, handleInput };
			});
			if (!result) {
				return { content: [{ type: "text", text: "Cancelled by user." }], details: { version: 1, status: "dismissed", answers: [] } };
			}
			return { content: [{ type: "text", text: `User answered: ${JSON.stringify(result.answers)}` }], details: result };
		},
	});
}
