// The official MCP conformance suite at 2025-11-25: 0.1.16 (issue 3) and
// 0.2.0-alpha.12 (issue 10, acceptance 1: what passed before, plus
// tools-call-error and json-schema-2020-12). lib/conformance.js runs them.
import { runConformance } from '../lib/conformance.js';

runConformance([
  ['0.1.16', '2025-11-25', ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection',
    'tools-call-simple-text', 'tools-call-error', 'json-schema-2020-12', 'resources-list', 'resources-read-text']],
  ['0.2.0-alpha.12', '2025-11-25', ['server-initialize', 'server-session-lifecycle', 'ping', 'tools-list',
    'dns-rebinding-protection', 'tools-call-simple-text', 'tools-call-error', 'json-schema-2020-12',
    'resources-list', 'resources-read-text']],
]);
