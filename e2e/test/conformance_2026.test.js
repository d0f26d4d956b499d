// The official MCP conformance suite 0.2.0-alpha.12 at 2026-07-28: the
// stateless core, headers, caching, tools, resources and every
// input-required-result (MRTR) scenario (issue 10, acceptance 1).
import { runConformance } from '../lib/conformance.js';

runConformance([
  ['0.2.0-alpha.12', '2026-07-28', ['server-stateless', 'http-header-validation', 'caching', 'tools-list',
    'tools-call-simple-text', 'tools-call-error', 'json-schema-2020-12', 'dns-rebinding-protection',
    'resources-list', 'resources-read-text', 'sep-2164-resource-not-found',
    'input-required-result-basic-elicitation', 'input-required-result-basic-sampling',
    'input-required-result-basic-list-roots', 'input-required-result-request-state',
    'input-required-result-multiple-input-requests', 'input-required-result-multi-round',
    'input-required-result-missing-input-response', 'input-required-result-non-tool-request',
    'input-required-result-result-type', 'input-required-result-unsupported-methods',
    'input-required-result-tampered-state', 'input-required-result-capability-check',
    'input-required-result-ignore-extra-params', 'input-required-result-validate-input']],
]);
