// Unit tests of the companion extension's protocol (notifier/resources/pi-extension/pi-notifier/
// protocol.ts), on node's own test runner with pi's Node 22, which strips the types:
//   node --experimental-strip-types --test tests/extension/
// tests/processes/test_extension_protocol.py runs them from pytest, and checks that the Python side
// (notifier/companion.py) reads what this side writes, and the other way round.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	type DialogInfo,
	LineReader,
	MAX_IN,
	MAX_KEYS,
	MAX_NAME,
	MAX_OPTIONS,
	MAX_SCREEN_LINE,
	MAX_SCREEN_LINES,
	MAX_TEXT,
	PROTOCOL,
	SOCKET_NAME,
	type Where,
	bound,
	boundJson,
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
} from "../../notifier/resources/pi-extension/pi-notifier/protocol.ts";

const where: Where = { sessionFile: "/s/a.jsonl", sessionDir: "/s", cwd: "/w", pid: 42 };

describe("bounds", () => {
	it("bound keeps strings up to the limit, cuts longer ones, and takes nothing else", () => {
		assert.equal(bound("abc"), "abc");
		assert.equal(bound("x".repeat(MAX_TEXT)), "x".repeat(MAX_TEXT));
		assert.equal(bound("x".repeat(MAX_TEXT + 1)), "x".repeat(MAX_TEXT));
		assert.equal(bound("abcdef", 3), "abc");
		for (const v of [undefined, null, 5, true, ["a"], { a: 1 }]) assert.equal(bound(v), null);
	});

	it("boundJson copies JSON values at most MAX_TEXT long, and is null otherwise", () => {
		const input = { command: "rm -rf /tmp/x", n: [1, 2] };
		const copy = boundJson(input);
		assert.deepEqual(copy, input);
		assert.notEqual(copy, input);
		assert.equal(boundJson(undefined), null);
		assert.equal(boundJson({ big: "x".repeat(MAX_TEXT) }), null);
		const loop: Record<string, unknown> = {};
		loop.self = loop;
		assert.equal(boundJson(loop), null);
		assert.equal(boundJson(() => 1), null); // (JSON.stringify says undefined)
		assert.equal(boundJson(10n), null); // (JSON.stringify throws)
	});

	it("plainLines strips terminal escapes and bounds the lines and each line", () => {
		const lines = [
			"\x1b[1;32m> 1. Yes\x1b[0m",
			"\x1b]8;;https://x\x07link\x1b]8;;\x07",
			"\x1b]0;title\x1b\\after",
			"\x1bPdcs\x1b\\kept",
			"\x1b7saved",
			7,
		];
		assert.deepEqual(plainLines(lines), ["> 1. Yes", "link", "after", "kept", "saved", "7"]);
		const many = plainLines(Array.from({ length: MAX_SCREEN_LINES + 5 }, () => "y".repeat(MAX_SCREEN_LINE + 5)));
		assert.equal(many?.length, MAX_SCREEN_LINES);
		assert.ok(many?.every((l) => l.length === MAX_SCREEN_LINE));
		assert.equal(plainLines("not a list"), null);
		assert.equal(plainLines(undefined), null);
	});
});

describe("dialogs", () => {
	it("newDialog bounds every field; only a custom dialog is not known to wait", () => {
		const options = Array.from({ length: MAX_OPTIONS + 3 }, (_, i) => (i === 0 ? "o".repeat(MAX_TEXT + 1) : i));
		const tool = { id: "c".repeat(MAX_NAME + 1), name: "bash", input: { command: "ls" } };
		const d = newDialog("t-1", "select", "Allow?", options, "value", tool, 1000);
		assert.equal(d.options?.length, MAX_OPTIONS);
		assert.equal(d.options?.[0], "o".repeat(MAX_TEXT));
		assert.equal(d.options?.[1], "1");
		assert.equal(d.toolCallId, "c".repeat(MAX_NAME));
		assert.equal(d.tool, "bash");
		assert.deepEqual(d.toolInput, { command: "ls" });
		assert.equal(d.waits, true);
		assert.equal(d.outerToolCallId, null); // the model's own call
		// a nested call (a codemode script's): the model's own call it runs under, bounded
		const nested = newDialog("t-3", "custom", null, null, "keys", { ...tool, outer: "o".repeat(MAX_NAME + 1) }, 1000);
		assert.equal(nested.outerToolCallId, "o".repeat(MAX_NAME));
		const custom = newDialog("t-2", "custom", 5, "not a list", "keys", null, 1000);
		assert.deepEqual(
			[custom.title, custom.options, custom.tool, custom.toolCallId, custom.toolInput, custom.waits],
			[null, null, null, null, null, false],
		);
	});

	it("a dialog is announced with the fields the Python side reads", () => {
		const d: DialogInfo = newDialog("t-1", "confirm", "Run it?", ["Yes", "No"], "value", null, 1234);
		assert.deepEqual(dialogEvent(d, where, null), {
			event: "dialog",
			id: "t-1",
			kind: "confirm",
			title: "Run it?",
			options: ["Yes", "No"],
			tool: null,
			tool_call_id: null,
			tool_input: null,
			outer_tool_call_id: null,
			session_file: "/s/a.jsonl",
			session_dir: "/s",
			cwd: "/w",
			pid: 42,
			at: 1234,
			remote: "value",
			screen: null,
			waits: true,
		});
		// before pi has a session (a start-up dialog): no session file, the pid and folders tell
		const early = dialogEvent(d, { ...where, sessionFile: null }, ["> Trust"]);
		assert.equal(early.session_file, null);
		assert.deepEqual(early.screen, ["> Trust"]);
	});

	it("hello carries the protocol version, the mode and the open dialogs", () => {
		const open = [dialogEvent(newDialog("t-1", "input", "Name?", null, "value", null, 1), where, null)];
		assert.deepEqual(helloEvent("1.6.0", "sid", "wrap", where, open), {
			event: "hello",
			protocol: PROTOCOL,
			pi_version: "1.6.0",
			pid: 42,
			session_file: "/s/a.jsonl",
			session_id: "sid",
			session_dir: "/s",
			cwd: "/w",
			mode: "wrap",
			dialogs: open,
		});
		assert.equal(PROTOCOL, 1);
	});

	it("closed says a confirm's answer as Yes/No, a text bounded, anything else as null", () => {
		assert.deepEqual(closedEvent("t-1", "answered", true, false), {
			event: "closed",
			id: "t-1",
			how: "answered",
			answer: "Yes",
			timed_out: false,
		});
		assert.equal(closedEvent("t-1", "remote", false, false).answer, "No");
		assert.equal(closedEvent("t-1", "answered", "x".repeat(MAX_TEXT + 9), false).answer, "x".repeat(MAX_TEXT));
		assert.equal(closedEvent("t-1", "answered", { a: 1 }, false).answer, null);
		const timed = closedEvent("t-1", "cancelled", null, true);
		assert.deepEqual([timed.how, timed.answer, timed.timed_out], ["cancelled", null, true]);
	});

	it("screen and bye", () => {
		assert.deepEqual(screenEvent("t-1", ["a"]), { event: "screen", id: "t-1", lines: ["a"] });
		assert.deepEqual(byeEvent("quit"), { event: "bye", reason: "quit" });
		assert.deepEqual(byeEvent(undefined), { event: "bye", reason: null });
	});
});

describe("requests", () => {
	it("hello, answer and keys are told apart; an answer says whether it has a value", () => {
		assert.deepEqual(parseRequest('{"hello":{}}'), { kind: "hello" });
		assert.deepEqual(parseRequest('{"answer":{"id":"t-1","value":"Yes"}}'), {
			kind: "answer",
			id: "t-1",
			hasValue: true,
			value: "Yes",
		});
		// null is a value (cancel); a missing one is not
		assert.deepEqual(parseRequest('{"answer":{"id":"t-1","value":null}}'), {
			kind: "answer",
			id: "t-1",
			hasValue: true,
			value: null,
		});
		assert.deepEqual(parseRequest('{"answer":{"id":"t-1"}}'), {
			kind: "answer",
			id: "t-1",
			hasValue: false,
			value: undefined,
		});
		assert.deepEqual(parseRequest('{"keys":{"id":"t-2","keys":["\\r"]}}'), { kind: "keys", id: "t-2", keys: ["\r"] });
		assert.deepEqual(parseRequest('{"keys":{"keys":[]}}'), { kind: "keys", id: null, keys: [] });
	});

	it("a line that is not a request is refused, or ignored when it is not an object", () => {
		assert.deepEqual(parseRequest("{nope"), { kind: "invalid", request: null, id: null, error: "not JSON" });
		assert.deepEqual(parseRequest('{"other":1}'), { kind: "invalid", request: null, id: null, error: "unknown request" });
		assert.deepEqual(parseRequest('{"answer":"t-1"}'), {
			kind: "invalid",
			request: "answer",
			id: null,
			error: "unknown request",
		});
		for (const line of ["5", "null", '"text"', "true"]) assert.equal(parseRequest(line), null);
	});

	it("keys: a list of at most MAX_KEYS strings", () => {
		assert.deepEqual(keyList(["\x1b[B", "\r"]), ["\x1b[B", "\r"]);
		assert.equal(keyList(Array(MAX_KEYS).fill("x"))?.length, MAX_KEYS);
		assert.equal(keyList(Array(MAX_KEYS + 1).fill("x")), null);
		assert.equal(keyList(["x", 1]), null);
		assert.equal(keyList("x"), null);
		assert.equal(keyList(undefined), null);
	});

	it("a result names its request and dialog", () => {
		assert.deepEqual(resultEvent("keys", "t-2", { ok: true, closed: false, screen: ["a"] }), {
			event: "result",
			request: "keys",
			id: "t-2",
			ok: true,
			closed: false,
			screen: ["a"],
		});
	});
});

describe("lines from a client", () => {
	it("splits lines across chunks and skips blank ones", () => {
		const r = new LineReader();
		assert.deepEqual(r.push('{"hel'), []);
		assert.deepEqual(r.push('lo":{}}\n\n  \n{"a":1}\n{"b"'), ['{"hello":{}}', '{"a":1}']);
		assert.deepEqual(r.push(":2}\n"), ['{"b":2}']);
		assert.equal(r.overflow, false);
	});

	it("overflows past MAX_IN bytes without a newline, not at MAX_IN", () => {
		const r = new LineReader();
		assert.deepEqual(r.push("x".repeat(MAX_IN)), []);
		assert.equal(r.overflow, false);
		r.push("x");
		assert.equal(r.overflow, true);
		const long = new LineReader();
		assert.equal(long.push(`${"y".repeat(MAX_IN + 10)}\n`)[0]?.length, MAX_IN + 10); // (a whole line is fine)
		assert.equal(long.overflow, false);
	});
});

it("the socket's name carries the pid that the stale-socket sweep checks", () => {
	const name = socketName(4242, "0a1b2c3d");
	assert.equal(name, "ext-4242-0a1b2c3d.sock");
	assert.equal(SOCKET_NAME.exec(name)?.[1], "4242");
	for (const other of ["ext-4242-0a1b2c3d.sock.tmp", "ext-x-0a.sock", "ext-1-XY.sock", "pi-notifier.sock"])
		assert.equal(SOCKET_NAME.exec(other), null);
});
