// Runs that wait for a person (issue 11, acceptance 1): a `login` in a
// browser session whose site asks for a one-time code after the password.
// The run waits (inputRequest kind "secret"); the code is given through the
// protocol, by independent clients:
//   - the TypeScript SDK v2 client with @modelcontextprotocol/ext-tasks,
//     MCP 2026-07-28: the task is input_required, tasks/get carries the
//     elicitation/create form request, tasks/update answers it;
//   - the TypeScript SDK 1.32 client with an elicitation handler, MCP
//     2025-11-25 Tasks: the task is input_required, the client calls
//     tasks/result, the server sends elicitation/create related to the task.
// Each time the session is then logged in: the members-only page opens in it.
// (answer_task_run from a second process, the dashboard form and
// `browsertask answer` are tested in Go: test/acceptance/input_test.go.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { connectV2, scratchDir, startServe } from '../lib/daemon.js';
import { LOGIN_PASSWORD, LOGIN_USER, OTP_CODE, OTP_LOGIN_PAGES, startGoFixture } from '../lib/gofixture.js';

const chromiumMissing = !process.env.CI && !existsSync('/usr/bin/chromium') && !process.env.BROWSERTASK_BROWSER
  ? 'Chromium not found at /usr/bin/chromium (set CI to make this a failure)' : false;

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

async function callOK(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.isError ?? false, false, `${name}: ${JSON.stringify(res)}`);
  return res.structuredContent;
}

// loginArgs starts a login in sessionId on a page with a one-time-code step.
function loginArgs(fixture, sessionId, page) {
  return {
    templateId: 'login', sessionId, options: { mode: 'async' },
    inputs: { url: fixture.url(page), username: LOGIN_USER, password: LOGIN_PASSWORD },
  };
}

// assertLoggedIn opens the members-only page in the session.
async function assertLoggedIn(client, fixture, sessionId) {
  const run = await callOK(client, 'run_task_template', {
    templateId: 'batch_extract_pages', sessionId, options: { mode: 'sync' },
    inputs: { urls: [fixture.url('/members')], fields: { secret: '#secret' }, includeText: false },
  });
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.equal(run.result.pages[0].fields.secret, 'members-only-42');
}

describe('a login that asks for a one-time code, answered through MCP', { skip: chromiumMissing }, () => {
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

  test('2026-07-28, SDK v2 + ext-tasks: input_required with an elicitation form, answered by tasks/update', async () => {
    const asked = [];
    const conn = await connectV2({
      url: daemon.url,
      onInputRequest: async (request, context) => {
        asked.push({ request, context });
        return { action: 'accept', content: { value: OTP_CODE } };
      },
    });
    try {
      const { sessionId } = await callOK(conn.client, 'create_browser_session', {});
      const exec = await conn.session.callTool('run_task_template', loginArgs(fixture, sessionId, OTP_LOGIN_PAGES[0]), {
        task: { preference: 'require', retentionMs: 30000 },
      });
      assert.equal(exec.kind, 'task');
      const taskId = exec.handle.taskId;
      await exec.settle();
      // The task asked once, as an elicitation form with one string field.
      assert.equal(asked.length, 1, JSON.stringify(asked));
      const { request, context } = asked[0];
      assert.equal(request.kind, 'elicitation');
      assert.equal(context.delivery, 'task-update');
      assert.equal(context.taskId, taskId);
      assert.equal(request.params.mode, 'form');
      assert.deepEqual(Object.keys(request.params.requestedSchema.properties), ['value']);
      assert.match(request.params.message, /one-time code/i);
      const waiting = conn.exchanges.find(e => e.request.method === 'tasks/get' && e.response.result?.status === 'input_required');
      assert.ok(waiting, 'no tasks/get answered input_required');
      assert.equal(waiting.response.result.inputRequests.otp.method, 'elicitation/create');
      const update = conn.sent.find(m => m.method === 'tasks/update');
      assert.ok(update, 'the answer did not travel as tasks/update');
      assert.equal(update.params.taskId, taskId);
      assert.deepEqual(update.params.inputResponses.otp.content, { value: OTP_CODE });
      // The task completed with the login's run; the code is nowhere in it.
      const view = await conn.session.task(taskId).snapshot();
      assert.equal(view.status, 'completed', JSON.stringify(view.raw));
      const run = view.raw.result.structuredContent;
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.equal(run.result.loggedIn, true);
      assert.equal(run.result.oneTimeCode, true);
      for (const ex of conn.exchanges) {
        assert.ok(!JSON.stringify(ex.response).includes(OTP_CODE), `the code is in the answer to ${ex.request.method}`);
      }
      await assertLoggedIn(conn.client, fixture, sessionId);
    } finally {
      await conn.close();
    }
  });

  test('2025-11-25, SDK 1.32 with an elicitation handler: tasks/result relays elicitation/create for the task', async () => {
    const client = new Client({ name: 'browsertask-e2e-elicit', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async req => {
      asked.push(req.params);
      return { action: 'accept', content: { value: OTP_CODE } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    try {
      assert.equal(client.getServerVersion()?.name, 'browsertask');
      const { sessionId } = await callOK(client, 'create_browser_session', {});
      const stream = client.experimental.tasks.callToolStream(
        { name: 'run_task_template', arguments: loginArgs(fixture, sessionId, OTP_LOGIN_PAGES[1]) },
        CallToolResultSchema, { task: { ttl: 30000 }, timeout: 120000 });
      let result;
      let taskId;
      for await (const msg of stream) {
        if (msg.type === 'taskCreated') taskId = msg.task.taskId;
        if (msg.type === 'error') throw msg.error;
        if (msg.type === 'result') result = msg.result;
      }
      assert.equal(asked.length, 1, JSON.stringify(asked));
      assert.equal(asked[0]._meta?.[RELATED_TASK]?.taskId, taskId);
      assert.match(asked[0].message, /one-time code/i);
      assert.equal(result.structuredContent.status, 'succeeded', JSON.stringify(result));
      assert.equal(result.structuredContent.result.loggedIn, true);
      assert.ok(!JSON.stringify(result).includes(OTP_CODE), 'the code is in the result');
      await assertLoggedIn(client, fixture, sessionId);
    } finally {
      await client.close();
    }
  });
});
