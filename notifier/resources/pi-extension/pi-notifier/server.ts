/**
 * The companion extension's socket: a user-only Unix socket in pi-notifier's runtime folder
 * (places.ts), served while this pi has a session (or a start-up dialog), to at most MAX_CLIENTS
 * clients. Every client gets the hello on connect, then every event; its requests are handed on.
 * It never throws, never blocks pi and never keeps it alive: a client that stops reading is
 * dropped once MAX_OUT bytes wait for it. index.ts is the extension's entry point.
 */

import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import type { Clients } from "./dialogs.ts";
import { runtimeDir, sweepStale } from "./places.ts";
import {
	type Json,
	LineReader,
	MAX_CLIENTS,
	MAX_OUT,
	type Request,
	parseRequest,
	resultEvent,
	socketName,
} from "./protocol.ts";

export type DialogRequest = Exclude<Request, { kind: "invalid" | "hello" }>;

export class Server implements Clients {
	private readonly clients = new Set<net.Socket>();
	private server: net.Server | null = null;
	private socketPath: string | null = null;
	private readonly token: string;
	private readonly hello: () => Json;
	private readonly onRequest: (req: DialogRequest) => Json;

	/** ``hello``: what a client gets on connect and when it asks; ``onRequest``: an answer or keys
	 * request carried out, its reply. */
	constructor(token: string, hello: () => Json, onRequest: (req: DialogRequest) => Json) {
		this.token = token;
		this.hello = hello;
		this.onRequest = onRequest;
	}

	get serving(): boolean {
		return this.server !== null;
	}

	listening(): boolean {
		return this.clients.size > 0;
	}

	broadcast(obj: Json): void {
		if (this.clients.size === 0) return;
		for (const sock of this.clients) send(sock, obj);
	}

	start(): void {
		if (this.server) return;
		const dir = runtimeDir();
		if (!dir) return;
		sweepStale(dir);
		const file = path.join(dir, socketName(process.pid, this.token));
		try {
			const srv = net.createServer((sock) => this.accept(sock));
			srv.on("error", () => this.stop());
			srv.listen(file, () => {
				try {
					fs.chmodSync(file, 0o600);
				} catch {
					this.stop();
				}
			});
			srv.unref();
			this.server = srv;
			this.socketPath = file;
			process.on("exit", this.cleanup);
		} catch {
			this.stop();
		}
	}

	stop(): void {
		for (const sock of this.clients) {
			try {
				sock.destroy();
			} catch {
				// ignore
			}
		}
		this.clients.clear();
		if (this.server) {
			try {
				this.server.close();
			} catch {
				// ignore
			}
		}
		this.server = null;
		this.cleanup();
		this.socketPath = null;
		process.removeListener("exit", this.cleanup);
	}

	private readonly cleanup = (): void => {
		if (this.socketPath) {
			try {
				fs.rmSync(this.socketPath, { force: true });
			} catch {
				// ignore
			}
		}
	};

	private accept(sock: net.Socket): void {
		if (this.clients.size >= MAX_CLIENTS) {
			sock.destroy();
			return;
		}
		this.clients.add(sock);
		sock.unref();
		sock.setEncoding("utf8");
		const reader = new LineReader();
		sock.on("data", (chunk: string) => {
			try {
				for (const line of reader.push(chunk)) this.handle(sock, line);
				if (reader.overflow) sock.destroy();
			} catch {
				sock.destroy();
			}
		});
		const drop = () => this.clients.delete(sock);
		sock.on("error", drop);
		sock.on("close", drop);
		send(sock, this.hello());
	}

	private handle(sock: net.Socket, line: string): void {
		const req = parseRequest(line);
		if (!req) return;
		if (req.kind === "invalid") send(sock, resultEvent(req.request, req.id, { ok: false, error: req.error }));
		else if (req.kind === "hello") send(sock, this.hello());
		else send(sock, this.onRequest(req));
	}
}

/** One event to one client: never throws, never blocks (a client MAX_OUT bytes behind is dropped). */
function send(sock: net.Socket, obj: Json): void {
	try {
		if (sock.destroyed) return;
		if (sock.writableLength > MAX_OUT) {
			sock.destroy();
			return;
		}
		sock.write(`${JSON.stringify(obj)}\n`);
	} catch {
		try {
			sock.destroy();
		} catch {
			// ignore
		}
	}
}
