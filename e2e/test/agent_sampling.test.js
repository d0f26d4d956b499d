// agent_task with the client's model (issue 32, acceptance 3, through MCP
// sampling): no model endpoint is configured and the TypeScript SDK client
// declared sampling, so every turn of the agent reaches the client as
// sampling/createMessage. The client's "model" is a script keyed on the
// page snapshot in the prompt: it searches the fixture catalog for mugs,
// follows "Next page" by the snapshot's references and answers the
// caller's schema; wrong references or a missing snapshot fail the run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { scratchDir, startServe } from '../lib/daemon.js';
import { startGoFixture } from '../lib/gofixture.js';

const chromiumMissing = !process.env.CI && !existsSync('/usr/bin/chromium') && !process.env.BROWSERTASK_BROWSER
  ? 'Chromium not found at /usr/bin/chromium (set CI to make this a failure)' : false;

// The catalog's mugs (internal/fixture/agent.go), in its order.
const MUGS = [['Blue mug', 12], ['Red mug', 9.5], ['Green mug', 11], ['Yellow mug', 8.25], ['Travel mug', 15.75]];

const SCHEMA = {
  type: 'object', required: ['mugs'],
  properties: { mugs: { type: 'array', items: { type: 'object', required: ['name', 'price'], properties: { name: { type: 'string' }, price: { type: 'number' } } } } },
};

// ref finds the reference of the element of role named name in a snapshot.
function ref(page, role, name) {
  const m = page.match(new RegExp(`(e\\d+) ${role} "${name}"`));
  return m ? m[1] : '';
}

// agentScript answers one turn from the prompt's current page.
function agentScript(prompt, seen) {
  const page = prompt.slice(prompt.lastIndexOf('Current page:\n'));
  const url = page.split('\n')[1].split(' ').pop();
  if (page.includes('results')) {
    for (const [name, price] of MUGS) {
      if (page.includes(name) && page.includes(price.toFixed(2))) seen.push({ name, price });
    }
    const next = ref(page, 'link', 'Next page');
    if (next) return { action: 'click', ref: next };
    return { action: 'answer', result: { mugs: seen }, evidence: { mugs: { url, text: 'results' } } };
  }
  const box = ref(page, 'textbox', 'Search') || ref(page, 'searchbox', 'Search');
  if (box) return { actions: [{ action: 'fill', ref: box, value: 'mug' }, { action: 'press', ref: box, value: 'Enter' }] };
  return { action: 'ask_person', question: 'unscripted state: ' + page.slice(0, 200) };
}

describe('agent_task with the client\'s model (sampling)', { skip: chromiumMissing }, () => {
  let daemon;
  let fixture;

  before(async () => {
    fixture = await startGoFixture();
    daemon = await startServe({ db: path.join(scratchDir(), 'browsertask.db') });
  });

  after(async () => {
    await daemon?.stop();
    await fixture?.close();
  });

  test('SDK 1.32, synchronous call: each turn is a sampling/createMessage the client answers', async () => {
    const asked = [];
    const seen = [];
    const client = new Client({ name: 'browsertask-e2e-agent', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async req => {
      asked.push(req.params);
      const prompt = req.params.messages.map(m => m.content.text).join('\n');
      return { role: 'assistant', model: 'e2e-scripted', stopReason: 'endTurn', content: { type: 'text', text: JSON.stringify(agentScript(prompt, seen)) } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    try {
      const res = await client.callTool({ name: 'run_task_template', arguments: {
        templateId: 'agent_task',
        inputs: { goal: 'List every mug with its price', startUrl: fixture.url('/agent/catalog') },
        options: { outputSchema: SCHEMA, mode: 'sync' },
      } }, CallToolResultSchema, { timeout: 120000 });
      assert.equal(res.isError ?? false, false, JSON.stringify(res));
      const run = res.structuredContent;
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.deepEqual(run.result.answer, { mugs: MUGS.map(([name, price]) => ({ name, price })) });
      // Four turns: the search form, then three pages of results.
      assert.equal(asked.length, 4, JSON.stringify(asked.map(a => a.messages.length)));
      assert.equal(run.metrics.modelCalls, 4, JSON.stringify(run.metrics));
      assert.match(asked[0].systemPrompt, /Reply with ONE JSON object/);
      assert.equal(run.result.replaySteps.startUrl, fixture.url('/agent/catalog'));
    } finally {
      await client.close();
    }
  });
});
