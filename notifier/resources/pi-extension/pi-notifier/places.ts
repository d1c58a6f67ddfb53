/**
 * Where things are, for the companion extension: the folder pi will write its sessions in (before
 * it has a session manager to ask), pi-notifier's runtime folder (chosen as the Python side chooses
 * it), the sweep of sockets dead pis left there, and pi's own version. Every function here is best
 * effort and never throws. index.ts is the extension's entry point.
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SOCKET_NAME } from "./protocol.ts";

const APP = "pi-notifier";

/** Where pi will write this pi's sessions, before it has a session manager to ask. */
export function sessionDirGuess(): string {
	const argv = process.argv;
	for (let i = 0; i < argv.length - 1; i++) {
		if (argv[i] === "--session-dir") return path.resolve(argv[i + 1]);
	}
	const home = os.homedir();
	const expand = (p: string) => (p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : p);
	const flat = process.env.PI_CODING_AGENT_SESSION_DIR;
	if (flat) return path.resolve(expand(flat));
	const env = process.env.PI_CODING_AGENT_DIR;
	const agent = env ? path.resolve(expand(env)) : path.join(home, ".pi", "agent");
	try {
		const value: unknown = JSON.parse(fs.readFileSync(path.join(agent, "settings.json"), "utf8"))?.sessionDir;
		if (typeof value === "string" && value.trim()) return path.resolve(agent, expand(value.trim()));
	} catch {
		// no settings, or none readable: the default
	}
	return path.join(agent, "sessions");
}

/**
 * pi-notifier's runtime folder, chosen exactly as the Python side chooses it
 * (notifier/system/paths.py, runtime_dir): in a private $XDG_RUNTIME_DIR its "pi-notifier"; in a
 * shared one (/tmp in some set-ups: another user may have taken that name) "pi-notifier-<uid>",
 * where nobody else can move it away; else, or when that is not ours, "run" in the state folder.
 * A folder is used only if it is ours (see privateFolder); null: none is, nothing is served.
 */
export function runtimeDir(): string | null {
	if (process.platform === "win32") return null;
	const uid = typeof process.getuid === "function" ? process.getuid() : -1;
	const candidates: string[] = [];
	const xdg = process.env.XDG_RUNTIME_DIR || "";
	if (xdg.startsWith("/")) {
		try {
			const st = fs.statSync(xdg); // (the variable may name a link: what it names is judged)
			const mode = st.mode & 0o7777;
			if (st.isDirectory() && st.uid === uid && (mode & 0o077) === 0) candidates.push(path.join(xdg, APP));
			else if (st.isDirectory() && (st.uid === 0 || st.uid === uid) && ((mode & 0o022) === 0 || (mode & 0o1000) !== 0))
				candidates.push(path.join(xdg, `${APP}-${uid}`));
		} catch {
			// fall through to the state folder
		}
	}
	const home = os.homedir();
	const state = (process.env.XDG_STATE_HOME || "").trim();
	if (process.platform === "darwin") candidates.push(path.join(home, "Library", "Application Support", APP, "run"));
	else candidates.push(path.join(state && path.isAbsolute(state) ? state : path.join(home, ".local", "state"), APP, "run"));
	for (const [i, dir] of candidates.entries()) {
		if (privateFolder(dir, i === candidates.length - 1)) return dir;
	}
	return null;
}

/**
 * A user-only folder of ours, or false: made 0700 when missing, then checked without following
 * links (a real folder owned by us, never a link); one others can read is made 0700 through a
 * descriptor of the very folder checked. Nothing is created or changed in a folder not ours.
 */
function privateFolder(dir: string, parents: boolean): boolean {
	try {
		if (parents) fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
		try {
			fs.mkdirSync(dir, { mode: 0o700 });
		} catch (err) {
			if ((err as NodeJS.ErrnoException).code !== "EEXIST") return false;
		}
		const st = fs.lstatSync(dir);
		const uid = typeof process.getuid === "function" ? process.getuid() : -1;
		if (st.isSymbolicLink() || !st.isDirectory() || (uid >= 0 && st.uid !== uid)) return false;
		if ((st.mode & 0o077) !== 0) {
			const c = fs.constants;
			const fd = fs.openSync(dir, c.O_RDONLY | c.O_DIRECTORY | c.O_NOFOLLOW);
			try {
				const now = fs.fstatSync(fd);
				if (now.ino !== st.ino || now.dev !== st.dev || now.uid !== st.uid) return false;
				fs.fchmodSync(fd, 0o700);
			} finally {
				fs.closeSync(fd);
			}
		}
		return true;
	} catch {
		return false;
	}
}

/** Remove sockets left behind by pi processes that died without cleaning up (SIGKILL). */
export function sweepStale(dir: string): void {
	try {
		for (const name of fs.readdirSync(dir)) {
			const m = SOCKET_NAME.exec(name);
			if (!m || Number(m[1]) === process.pid) continue;
			try {
				process.kill(Number(m[1]), 0);
			} catch (err) {
				if ((err as NodeJS.ErrnoException).code === "ESRCH") fs.rmSync(path.join(dir, name), { force: true });
			}
		}
	} catch {
		// best effort
	}
}

let cachedVersion: string | null | undefined;
export function piVersion(): string | null {
	if (cachedVersion !== undefined) return cachedVersion;
	cachedVersion = null;
	try {
		let dir = path.dirname(fs.realpathSync(process.argv[1] || ""));
		for (let i = 0; i < 6; i++) {
			const file = path.join(dir, "package.json");
			if (fs.existsSync(file)) {
				const pkg: { name?: unknown; version?: unknown } | null = JSON.parse(fs.readFileSync(file, "utf8"));
				if (typeof pkg?.name === "string" && pkg.name.endsWith("pi-coding-agent")) {
					cachedVersion = typeof pkg.version === "string" ? pkg.version : null;
					break;
				}
			}
			dir = path.dirname(dir);
		}
	} catch {
		// unknown
	}
	return cachedVersion;
}
