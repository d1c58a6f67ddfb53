/**
 * A stand-in for a question tool that asks through pi's own dialogs (the shape of `ask_user`
 * tools that fall back to `ctx.ui.select` / `ctx.ui.confirm`: `{question, options: [{label,
 * recommended}]}`), for the live test that an answer given from pi-notifier reaches pi as the
 * option the user saw. Written for this project. The select draws the recommended options first,
 * " (Recommended)" after their labels, then the others, then a row of its own; with `confirm`
 * set, pi's confirm asks the question instead (its Yes is the option whose label starts "Yes").
 * The result's text says the option picked. A second tool, `deploy` (no question tool), asks two
 * selects in turn in one call.
 */
import { Type } from "typebox";

type Opt = { label: string; recommended?: boolean };

export default function selectAskStandIn(pi: any) {
	pi.registerTool({
		name: "ask_user",
		label: "Ask",
		description: "Ask the user a question with options.",
		parameters: Type.Object({ question: Type.String(), options: Type.Array(Type.Any()), confirm: Type.Optional(Type.Boolean()) }),
		async execute(_id: string, params: { question: string; options: Opt[]; confirm?: boolean }, _signal: unknown, _update: unknown, ctx: any) {
			const opts = params.options;
			let picked: Opt | undefined;
			if (params.confirm) {
				const yes = await ctx.ui.confirm(params.question, "");
				picked = opts.find((o) => o.label.toLowerCase().startsWith(yes ? "yes" : "no"));
			} else {
				const first = [...opts.filter((o) => o.recommended), ...opts.filter((o) => !o.recommended)];
				const rows = [...first.map((o) => (o.recommended ? `${o.label} (Recommended)` : o.label)), "Type something else"];
				const row = await ctx.ui.select(params.question, rows);
				const at = rows.indexOf(row);
				picked = at >= 0 && at < first.length ? first[at] : undefined;
			}
			if (picked === undefined) {
				return { content: [{ type: "text", text: "Cancelled" }], details: { cancelled: true } };
			}
			return { content: [{ type: "text", text: `User chose: ${picked.label}` }], details: { answer: picked.label } };
		},
	});
	pi.registerTool({
		name: "deploy",
		label: "Deploy",
		description: "Deploy the app.",
		parameters: Type.Object({ app: Type.String() }),
		async execute(_id: string, _params: unknown, _signal: unknown, _update: unknown, ctx: any) {
			const region = await ctx.ui.select("Which region?", ["eu", "us"]);
			const wipe = await ctx.ui.select("Delete the production database first?", ["yes, delete it", "no"]);
			return { content: [{ type: "text", text: `region ${region}, delete: ${wipe}` }], details: {} };
		},
	});
}
