// The scripted "models" of agent_task's five fixture tasks (issue 32,
// acceptance 3), for a client that answers sampling/createMessage: each
// turn is answered from the page snapshot in the prompt, by the elements'
// references (e12 button "Sign in"), as the Go tests' scripts do
// (templates/agent_task_test.go, agent_task_flow_test.go,
// test/acceptance/agent_task_takeover_test.go). A state a script does not
// know returns null; the caller records it and fails the test.
import { LOGIN_PASSWORD, LOGIN_USER } from './gofixture.js';

// pageOf is the prompt's current page: its snapshot, after the history
// (which names references of earlier pages).
export function pageOf(prompt) {
  const i = prompt.lastIndexOf('Current page:\n');
  return i < 0 ? '' : prompt.slice(i);
}

// urlOf is the current page's URL (the snapshot's header line:
// page "Title" URL).
export function urlOf(page) {
  const m = page.match(/^page "(?:[^"\\]|\\.)*" (\S+)$/m);
  return m ? m[1] : '';
}

// ref is the reference of the element of role named name, or ''.
export function ref(page, role, name) {
  for (const m of page.matchAll(/(e\d+) ([a-z]+) "((?:[^"\\]|\\.)*)"/g)) {
    if (m[2] === role && m[3] === name) return m[1];
  }
  return '';
}

// refOfRole is the reference of the first element of role, named or not.
export function refOfRole(page, role) {
  const m = page.match(new RegExp(`(e\\d+) ${role}\\b`));
  return m ? m[1] : '';
}

// act is one reply of the protocol (internal/agent): the actions, in order.
function act(...actions) {
  return { thought: 'scripted', actions };
}

// answer ends the task with result, each property's evidence the text
// read on the current page.
function answer(page, result) {
  const evidence = {};
  for (const [k, v] of Object.entries(result)) evidence[k] = { url: urlOf(page), text: typeof v === 'string' ? v : k };
  return act({ action: 'answer', result, evidence });
}

// The catalog's mugs (internal/fixture/agent.go AgentProducts), in its order.
export const MUGS = [['Blue mug', 12], ['Red mug', 9.5], ['Green mug', 11], ['Yellow mug', 8.25], ['Travel mug', 15.75]];

function objectSchema(props) {
  return { type: 'object', required: Object.keys(props), properties: props };
}

// TASKS are the five tasks: the inputs (start page relative to the
// fixture), the output schema, the expected answer, how many turns the
// model takes, and script(), which returns a fresh model (a function of
// the page; it may keep state across turns).
export const TASKS = {
  // Sign in with a one-time code: the model fills the login form, asks the
  // person for the code as a secret typed into the code field (the code
  // never reaches the model), then reads the members' page.
  otp: {
    goal: 'Sign in as alice and read the members\' secret',
    start: '/login-otp/a',
    schema: objectSchema({ user: { type: 'string' }, secret: { type: 'string' } }),
    answer: { user: 'alice', secret: 'members-only-42' },
    turns: 3,
    script: () => page => {
      if (page.includes('Welcome alice')) return answer(page, { user: 'alice', secret: 'members-only-42' });
      if (page.includes('Enter the 6-digit code')) {
        return act({ action: 'ask_person', question: 'The one-time code we sent you?', secret: true, ref: refOfRole(page, 'textbox') },
          { action: 'click', ref: ref(page, 'button', 'Verify') });
      }
      if (ref(page, 'textbox', 'Username')) {
        return act({ action: 'fill', ref: ref(page, 'textbox', 'Username'), value: LOGIN_USER },
          { action: 'fill', ref: ref(page, 'textbox', 'Password'), value: LOGIN_PASSWORD },
          { action: 'click', ref: ref(page, 'button', 'Sign in') });
      }
      return null;
    },
  },
  // Search and paginate: search the catalog for mugs and follow "Next
  // page" to the last, collecting every mug shown.
  search: {
    goal: 'List every mug with its price',
    start: '/agent/catalog',
    schema: objectSchema({ mugs: { type: 'array', minItems: 1, items: objectSchema({ name: { type: 'string' }, price: { type: 'number' } }) } }),
    answer: { mugs: MUGS.map(([name, price]) => ({ name, price })) },
    turns: 4,
    script: () => {
      const seen = [];
      return page => {
        if (page.includes('results')) {
          for (const [name, price] of MUGS) {
            if (page.includes(name) && page.includes(price.toFixed(2))) seen.push({ name, price });
          }
          const next = ref(page, 'link', 'Next page');
          if (next) return act({ action: 'click', ref: next });
          return act({ action: 'answer', result: { mugs: seen }, evidence: { mugs: { url: urlOf(page), text: 'results' } } });
        }
        const box = ref(page, 'searchbox', 'Search') || ref(page, 'textbox', 'Search');
        if (box) return act({ action: 'fill', ref: box, value: 'mug' }, { action: 'press', ref: box, value: 'Enter' });
        return null;
      };
    },
  },
  // A multi-page form: three pages of an application; the final "Submit
  // application" posts, so the person is asked first.
  form: {
    goal: 'Apply for the Pro plan as Ada Lovelace, ada@example.com',
    start: '/agent/apply/1',
    schema: objectSchema({ received: { type: 'string' } }),
    answer: { received: 'Application received for Ada Lovelace, plan pro' },
    turns: 4,
    script: () => page => {
      if (page.includes('Application received for')) {
        const text = 'Application received for Ada Lovelace, plan pro';
        return page.includes(text) ? answer(page, { received: text }) : null;
      }
      if (ref(page, 'button', 'Submit application')) return act({ action: 'click', ref: ref(page, 'button', 'Submit application') });
      if (ref(page, 'combobox', 'Plan')) {
        return act({ action: 'select', ref: ref(page, 'combobox', 'Plan'), value: 'Pro' }, { action: 'click', ref: ref(page, 'button', 'Next') });
      }
      if (ref(page, 'textbox', 'Full name')) {
        return act({ action: 'fill', ref: ref(page, 'textbox', 'Full name'), value: 'Ada Lovelace' },
          { action: 'fill', ref: ref(page, 'textbox', 'Email'), value: 'ada@example.com' },
          { action: 'click', ref: ref(page, 'button', 'Next') });
      }
      return null;
    },
  },
  // A checkout that asks before paying: "Place order" is a commit, so the
  // person confirms it; the answer is the order's number.
  checkout: {
    goal: 'Order the cart',
    start: '/shop/cart',
    schema: objectSchema({ order: { type: 'string' } }),
    answer: { order: 'Order placed #1' },
    turns: 2,
    script: () => page => {
      const placed = page.match(/Order placed #\d+/);
      if (placed) return answer(page, { order: placed[0] });
      if (ref(page, 'button', 'Place order')) return act({ action: 'click', ref: ref(page, 'button', 'Place order') });
      return null;
    },
  },
  // A task that needs a takeover: only a person's pointer passes the
  // human check, so the model asks for a takeover once; after the person
  // is done it follows "Continue" and reads the welcome. Seeing the check
  // again after the takeover is not scripted (the person did not pass it).
  takeover: {
    goal: 'Get past the human check and read the welcome',
    start: '/human-check',
    schema: objectSchema({ welcome: { type: 'string' } }),
    answer: { welcome: 'Welcome, person' },
    turns: 3,
    script: () => {
      let asked = false;
      return page => {
        if (page.includes('Welcome, person')) return answer(page, { welcome: 'Welcome, person' });
        if (ref(page, 'link', 'Continue')) return act({ action: 'click', ref: ref(page, 'link', 'Continue') });
        if (ref(page, 'button', 'I am human') && !asked) {
          asked = true;
          return act({ action: 'ask_person', takeover: true, question: 'Prove you are a person: click I am human, then press Done' });
        }
        return null;
      };
    },
  },
};
