// Every public operation in /openapi.json carries an example of each JSON answer it documents
// with one (and of its JSON request body), and every example is valid against the schema next
// to it, as an OpenAPI 3.1 validator reads it (openapi-schema-validator, PyPI, in the suites' venv).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { OPERATION_EXAMPLES } from '../../src/openapi/examples.ts';
import { startTestService, type TestService } from '../support/service.ts';

const PYTHON = process.env.LIKENESS_TEST_PYTHON ?? 'python3';

// Prints one line per example: "ok <where>" or "bad <where>: <why>".
const CHECK = `
import json, sys
from openapi_schema_validator import OAS31Validator
doc = json.load(open(sys.argv[1]))
def resolve(node):
    if isinstance(node, dict):
        if "$ref" in node:
            target = doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            return resolve(target)
        return {k: resolve(v) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(v) for v in node]
    return node
for path, operations in doc["paths"].items():
    for method, op in operations.items():
        bodies = [("request", (op.get("requestBody") or {}).get("content", {}))] + [(status, r.get("content", {})) for status, r in op.get("responses", {}).items()]
        for where, content in bodies:
            media = content.get("application/json")
            if not media or "example" not in media:
                continue
            name = f"{op.get('operationId')} {where}"
            errors = sorted(OAS31Validator(resolve(media["schema"])).iter_errors(media["example"]), key=str)
            print(f"bad {name}: {errors[0].message}" if errors else f"ok {name}")
`;

let service: TestService;
beforeAll(async () => {
  service = await startTestService('pglite');
});
afterAll(() => service?.stop());

test('every operation has examples of its JSON answers, each valid against its schema', async () => {
  const doc = (await (await service.call('GET', '/openapi.json')).json()) as {
    paths: Record<
      string,
      Record<
        string,
        {
          operationId: string;
          requestBody?: { content: Record<string, { example?: unknown }> };
          responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
        }
      >
    >;
  };
  const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops));
  expect(operations.map((op) => op.operationId).sort()).toEqual(Object.keys(OPERATION_EXAMPLES).sort());
  for (const op of operations) {
    // The success answer (204 has no body) and a JSON request body always have one.
    const success = Object.keys(op.responses).find(
      (status) => status.startsWith('2') && op.responses[status]!.content?.['application/json'],
    );
    if (success)
      expect([
        op.operationId,
        success,
        op.responses[success]!.content!['application/json']!.example !== undefined,
      ]).toEqual([op.operationId, success, true]);
    const json = op.requestBody?.content['application/json'];
    if (json) expect([op.operationId, json.example !== undefined]).toEqual([op.operationId, true]);
  }

  const file = join(service.dataDir, 'openapi.json');
  await Bun.write(file, JSON.stringify(doc));
  const check = Bun.spawn([PYTHON, '-c', CHECK, file], { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([
    new Response(check.stdout).text(),
    new Response(check.stderr).text(),
    check.exited,
  ]);
  expect({ code, err }).toEqual({ code: 0, err: '' });
  const lines = out.trim().split('\n');
  expect(lines.filter((line) => !line.startsWith('ok '))).toEqual([]);
  expect(lines.length).toBeGreaterThanOrEqual(Object.keys(OPERATION_EXAMPLES).length);
});
