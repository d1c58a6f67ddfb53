/**
 * A stand-in for a select-based clarify tool (the shape of `dkmnx/pi-clarify`'s `clarify_prompt`:
 * `{question, options: string[]}`), for the live test that a question tool nobody named is seen
 * by its arguments' shape. Written for this project: pi's own select dialog with the suggestions
 * and an "Other" row; the result's text says the pick.
 */
import { Type } from "typebox";

export default function clarifyStandIn(pi: any) {
	pi.registerTool({
		name: "clarify_prompt",
		label: "Clarify",
		description: "Ask the user a clarification question with suggested answers.",
		parameters: Type.Object({ question: Type.String(), options: Type.Array(Type.String()) }),
		async execute(_id: string, params: { question: string; options: string[] }, _signal: unknown, _update: unknown, ctx: any) {
			const picked = await ctx.ui.select(params.question, [...params.options, "Other"]);
			if (picked === undefined) {
				return { content: [{ type: "text", text: "Cancelled" }], details: { cancelled: true } };
			}
			return { content: [{ type: "text", text: `User chose: ${picked}` }], details: { cancelled: false, answer: picked } };
		},
	});
}
