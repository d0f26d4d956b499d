// The MCP Inspector CLI (the npm package @modelcontextprotocol/inspector,
// pinned in package.json) as a child process.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const inspectorBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.bin', 'mcp-inspector');

// runInspector runs `mcp-inspector --cli --format json -q ...args` with HOME
// set to home (its config and caches stay in the test's scratch dir), kills
// it after 60 s, and resolves with its exit code (or signal), stdout and
// stderr.
export function runInspector(args, home) {
  return new Promise((resolve, reject) => {
    const proc = spawn(inspectorBin, ['--cli', '--format', 'json', '-q', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOME: home },
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', c => { out += c; });
    proc.stderr.on('data', c => { err += c; });
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60000);
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, out, err });
    });
  });
}
