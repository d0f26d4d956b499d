// The client snippets of e2e/examples/ run as pasted: each is executed as
// its own node process against the built binary and a local fixture site.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { binary, scratchDir } from '../lib/daemon.js';
import { startFixture } from '../lib/fixture.js';

const run = promisify(execFile);
const examples = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'examples');
const chromiumMissing = !process.env.CI && !existsSync('/usr/bin/chromium') && !process.env.BROWSERTASK_BROWSER
  ? 'Chromium not found at /usr/bin/chromium (set CI to make this a failure)' : false;

test('examples/ext-tasks-client.mjs: SDK v2 + ext-tasks 0.2.2 runs batch_extract_pages as a task, as pasted', { skip: chromiumMissing }, async () => {
  const fixture = await startFixture();
  try {
    const db = path.join(scratchDir(), 'browsertask.db');
    const urls = [fixture.url('/page/1'), fixture.url('/page/2')];
    const { stdout, stderr } = await run(process.execPath, [path.join(examples, 'ext-tasks-client.mjs'), ...urls], {
      env: { ...process.env, BROWSERTASK_BIN: binary(), BROWSERTASK_ARGS: `--db ${db}` },
      timeout: 120000,
    });
    assert.match(stderr, /^task run_[0-9a-f-]+ started$/m);
    const out = JSON.parse(stdout);
    assert.equal(out.status, 'succeeded');
    assert.deepEqual(out.summary, { total: 2, succeeded: 2, failed: 0 });
  } finally {
    await fixture.close();
  }
});
