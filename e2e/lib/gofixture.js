// The Go fixture site (internal/fixture, served by internal/fixture/fixtured):
// the login pages, their one-time-code variants and the members-only page the
// Go tests use, so the end-to-end tests log in against the same pages.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { scratchDir } from './daemon.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// The account and the one-time code the fixture accepts (internal/fixture).
export const LOGIN_USER = 'alice';
export const LOGIN_PASSWORD = 'Tr0ub4dor&3-fixture';

let built;

// startGoFixture builds and starts fixtured; url(path) is absolute, close()
// stops it (closing its stdin).
export async function startGoFixture() {
  if (!built) {
    built = path.join(scratchDir('browsertask-fixtured-'), 'fixtured');
    execFileSync('go', ['build', '-o', built, './internal/fixture/fixtured'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  }
  const proc = spawn(built, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise(resolve => proc.on('exit', resolve));
  const base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('fixtured did not print its URL')), 30000);
    readline.createInterface({ input: proc.stdout }).once('line', line => { clearTimeout(timer); resolve(line.trim()); });
    proc.once('exit', code => { clearTimeout(timer); reject(new Error(`fixtured exited with ${code}`)); });
  });
  return {
    url: p => base + p,
    async close() {
      proc.stdin.end();
      await exited;
    },
  };
}

// OTP_CODE is the one-time code the fixture's second steps accept;
// OTP_LOGIN_PAGES are login pages with a one-time-code step.
export const OTP_CODE = '482913';
export const OTP_LOGIN_PAGES = ['/login-otp/a', '/login-otp/b', '/login-otp/c'];
