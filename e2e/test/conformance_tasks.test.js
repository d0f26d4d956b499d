// The official MCP conformance suite 0.2.0-alpha.12: the ten scenarios of
// the Tasks extension (issue 10, acceptance 1). They are not on the spec
// timeline, so the suite runs them with --force. tasks-status-notifications
// reports SKIPPED by design of the suite (lib/conformance.js).
import { runConformance } from '../lib/conformance.js';

runConformance([
  ['0.2.0-alpha.12', '2026-07-28', ['tasks-lifecycle', 'tasks-capability-negotiation', 'tasks-wire-fields',
    'tasks-request-state-removal', 'tasks-mrtr-input', 'tasks-request-headers', 'tasks-dispatch-and-envelope',
    'tasks-status-notifications', 'tasks-required-task-error', 'tasks-mrtr-composition'], ['--force']],
]);
