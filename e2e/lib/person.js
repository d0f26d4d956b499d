// The person in the agent_task e2e tests: what they see and do through the
// dashboard's HTTP endpoints (web/routes.go) rather than a browser. They
// watch the run's live view (GET /runs/{id}/live/stream, Server-Sent
// Events), wait until it hands them the wheel (data-control="true") with a
// frame of the tab, point and click in that frame (POST
// /runs/{id}/live/{tab}/input, coordinates as fractions of the frame) and
// press Done (POST /runs/{id}/answer, confirm=yes), as the run page's form
// does. Also: the fixture's counters (GET /fixture/counts).

// HUMAN_BUTTON is where /human-check's button sits, in CSS pixels
// (internal/fixture/human.go HumanButtonLeft/Top/Width/Height).
export const HUMAN_BUTTON = { left: 100, top: 160, width: 320, height: 100 };

// fixtureCounts reads the fixture's counters, with the hits of paths.
export async function fixtureCounts(fixture, paths = []) {
  const q = new URLSearchParams(paths.map(p => ['path', p]));
  const res = await fetch(fixture.url('/fixture/counts?' + q));
  if (res.status !== 200) throw new Error(`GET /fixture/counts: ${res.status} ${await res.text()}`);
  return res.json();
}

// jpegSize reads the width and height of a JPEG from its first
// start-of-frame marker.
export function jpegSize(buf) {
  if (buf[0] !== 0xff || buf[1] !== 0xd8) throw new Error('the frame is not a JPEG');
  for (let i = 2; i + 9 < buf.length;) {
    if (buf[i] !== 0xff) throw new Error(`JPEG marker expected at byte ${i}`);
    const marker = buf[i + 1];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: buf.readUInt16BE(i + 5), width: buf.readUInt16BE(i + 7) };
    }
    i += 2 + buf.readUInt16BE(i + 2);
  }
  throw new Error('no JPEG start-of-frame marker');
}

// sseEvents yields the events ({event, data}) of a text/event-stream body.
async function* sseEvents(body) {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let event = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
        else if (line.startsWith('data:')) data.push(line.slice(5));
      }
      yield { event, data: data.join('\n') };
    }
  }
}

// watchForWheel opens run runId's live view at base (the dashboard's
// origin) and resolves once the person has the wheel on a tab showing
// urlPart with a frame of it: {tab, inputURL, width, height} (the frame's
// size in pixels). The stream closes then. It rejects when the run's live
// view ends first.
export async function watchForWheel(base, runId, urlPart) {
  const ctl = new AbortController();
  // A viewer larger than the page, so frames are not scaled down.
  const res = await fetch(`${base}/runs/${encodeURIComponent(runId)}/live/stream?w=4000&h=4000`, { signal: ctl.signal });
  if (res.status !== 200) throw new Error(`live stream: ${res.status} ${await res.text()}`);
  const frames = new Map();
  let control = null;
  try {
    for await (const ev of sseEvents(res.body)) {
      if (ev.event === 'end') throw new Error(`the live view of ${runId} ended before the takeover`);
      if (ev.event === 'tabs') {
        control = null;
        if (!/class="live-tabs" data-control="true"/.test(ev.data)) continue;
        for (const m of ev.data.matchAll(/data-tab-id="([^"]+)" data-closed="false" data-input-url="([^"]+)"[\s\S]*?title="([^"]*)"/g)) {
          if (m[3].includes(urlPart)) control = { tab: m[1], inputURL: m[2].replaceAll('&amp;', '&') };
        }
      } else if (ev.event.startsWith('frame-')) {
        const m = ev.data.match(/src="data:image\/jpeg;base64,([^"]+)"/);
        if (m) frames.set(ev.event.slice(6), Buffer.from(m[1], 'base64'));
      }
      if (control && frames.has(control.tab)) {
        return { ...control, ...jpegSize(frames.get(control.tab)) };
      }
    }
    throw new Error(`the live stream of ${runId} closed before the takeover`);
  } finally {
    ctl.abort();
  }
}

// clickLikeAPerson sends a person's click on the CSS-pixel box to the tab
// in view ({inputURL, width, height} of watchForWheel): the pointer comes
// from the box's left in eight moves, presses and releases at its centre.
// Frames are not scaled (watchForWheel asked for a larger viewer), so a
// frame pixel is a CSS pixel of the page.
export async function clickLikeAPerson(base, view, box) {
  const cx = box.left + box.width / 2;
  const cy = box.top + box.height / 2;
  const at = (x, y) => ({ x: x / view.width, y: y / view.height });
  const events = [];
  for (let i = 0; i <= 8; i++) {
    events.push({ type: 'mousemove', ...at(cx - 120 + (120 * i) / 8, cy - 20 + (20 * i) / 8) });
  }
  events.push({ type: 'mousedown', ...at(cx, cy), button: 'left', buttons: 1, clickCount: 1 });
  events.push({ type: 'mouseup', ...at(cx, cy), button: 'left', clickCount: 1 });
  const res = await fetch(base + view.inputURL, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events }),
  });
  if (res.status !== 204) throw new Error(`live input: ${res.status} ${await res.text()}`);
}

// pressDone answers the takeover requestId of run runId with Done, as the
// run page's form does (a 303 to the run page).
export async function pressDone(base, runId, requestId) {
  const res = await fetch(`${base}/runs/${encodeURIComponent(runId)}/answer`, {
    method: 'POST', redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ requestId, confirm: 'yes' }),
  });
  if (res.status !== 303) throw new Error(`Done: ${res.status} ${await res.text()}`);
}
