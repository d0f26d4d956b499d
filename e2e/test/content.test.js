// Issue "Results an agent can use", acceptance 3: a stock TypeScript SDK
// client (v1) sees a one-line summary, the JSON, image content for a
// screenshot_pages sync call and resource_link blocks for its artifacts;
// following a link with resources/read returns the PNG bytes intact.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';

import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { connectStdio, scratchDir } from '../lib/daemon.js';
import { startFixture } from '../lib/fixture.js';

let client;
let fixture;

before(async () => {
  fixture = await startFixture();
  client = await connectStdio({ db: path.join(scratchDir(), 'browsertask.db') });
});

after(async () => {
  await client?.close();
  await fixture?.close();
});

const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');

// getArtifactBytes reads a whole artifact through get_artifact.
async function getArtifactBytes(artifactId) {
  const parts = [];
  let offset = 0;
  for (;;) {
    const res = await client.callTool({ name: 'get_artifact', arguments: { artifactId, offset } }, CallToolResultSchema);
    const c = res.structuredContent;
    parts.push(Buffer.from(c.data, 'base64'));
    offset += c.length;
    if (c.complete) return { bytes: Buffer.concat(parts), result: res };
  }
}

test('screenshot_pages sync: summary, JSON, image blocks and resource links that resources/read follows to the PNG bytes', async () => {
  const urls = [1, 2].map(n => fixture.url(`/page/${n}`));
  const res = await client.callTool({
    name: 'run_task_template',
    arguments: { templateId: 'screenshot_pages', inputs: { urls }, options: { mode: 'sync' } },
  }, CallToolResultSchema, { timeout: 120000 });
  assert.equal(res.isError ?? false, false);
  const run = res.structuredContent;
  assert.equal(run.status, 'succeeded');
  assert.equal(run.artifactIds.length, 2);

  const [summary, json, ...rest] = res.content;
  assert.equal(summary.type, 'text');
  assert.match(summary.text, /^screenshot_pages succeeded: 2\/2 pages; 2 artifact\(s\)$/);
  assert.equal(json.type, 'text');
  assert.deepEqual(JSON.parse(json.text), run);

  const images = rest.filter(c => c.type === 'image');
  const links = rest.filter(c => c.type === 'resource_link');
  assert.equal(images.length, 2, `content types: ${res.content.map(c => c.type)}`);
  for (const img of images) {
    assert.equal(img.mimeType, 'image/jpeg');
    const bytes = Buffer.from(img.data, 'base64');
    assert.equal(bytes.subarray(0, 3).toString('hex'), 'ffd8ff', 'a JPEG');
  }
  const answerBytes = res.content.reduce((n, c) => n + (c.text?.length ?? 0) + (c.data?.length ?? 0), 0);
  assert.ok(answerBytes <= 64 * 1024, `the answer is ${answerBytes} bytes, over the 64 KiB budget`);

  assert.deepEqual(links.map(l => l.uri), run.artifactIds.map(id => `browsertask://artifacts/${id}`));
  for (const link of links) {
    assert.equal(link.mimeType, 'image/png');
    assert.match(link.name, /\.png$/);
    const id = link.uri.slice('browsertask://artifacts/'.length);
    const { bytes, result } = await getArtifactBytes(id);
    assert.equal(link.size, bytes.length);
    assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
    // get_artifact of an image that fits one chunk also carries it as an image.
    const img = result.content.find(c => c.type === 'image');
    assert.ok(img, `get_artifact content types: ${result.content.map(c => c.type)}`);
    assert.equal(img.mimeType, 'image/png');
    assert.equal(sha256(Buffer.from(img.data, 'base64')), sha256(bytes));

    const read = await client.readResource({ uri: link.uri });
    assert.equal(read.contents.length, 1);
    assert.equal(read.contents[0].mimeType, 'image/png');
    assert.equal(sha256(Buffer.from(read.contents[0].blob, 'base64')), sha256(bytes), 'resources/read returns the PNG bytes intact');
  }
});

test('list_task_runs rows carry no result; an error answer starts with its summary', async () => {
  const res = await client.callTool({ name: 'list_task_runs', arguments: {} }, CallToolResultSchema);
  const rows = res.structuredContent.runs;
  assert.ok(rows.length >= 1);
  for (const row of rows) {
    assert.equal('result' in row, false);
    assert.equal(typeof row.resultBytes, 'number');
  }
  assert.match(res.content[0].text, /^\d+ run\(s\) match, showing \d+ from offset 0/);

  const err = await client.callTool({ name: 'get_task_run', arguments: { runId: 'run_missing' } }, CallToolResultSchema);
  assert.equal(err.isError, true);
  assert.match(err.content[0].text, /^error RUN_NOT_FOUND: /);
  assert.equal(JSON.parse(err.content[1].text).errorCode, 'RUN_NOT_FOUND');
});
