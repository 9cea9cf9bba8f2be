// Drives `dralloc serve` with @kubernetes/client-node: the kubeconfig from `dralloc kubeconfig` as it is
// (CA data, token), an informer (list, then watch) on ResourceClaims, and create / read / replace / JSON patch
// / merge patch / list / delete through the typed ResourceV1Api. Prints one JSON line per step; the checks are
// in tests/server/test_clients_e2e.py.
import * as k8s from '@kubernetes/client-node';

const [kubeconfig, namespace] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const api = kc.makeApiClient(k8s.ResourceV1Api);
const print = (...fields) => console.log(JSON.stringify(fields));

const seen = [];
async function informerSaw(kind, name) {
  for (let i = 0; i < 200; i++) {
    if (seen.some(([k, n]) => k === kind && n === name)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the informer never saw ${kind} ${name}`);
}

const informer = k8s.makeInformer(kc, `/apis/resource.k8s.io/v1/namespaces/${namespace}/resourceclaims`,
  () => api.listNamespacedResourceClaim({ namespace }));
for (const kind of ['add', 'update', 'delete']) {
  informer.on(kind, (obj) => seen.push([kind, obj.metadata.name, obj.metadata.labels ?? {}]));
}
let stopping = false; // stopping aborts the open watch, which the informer reports as an error
informer.on('error', (err) => stopping || print('informer-error', String(err)));
try {
  await informer.start();
  print('listed', informer.list(namespace).map((o) => o.metadata.name));
  const body = {
    apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaim', metadata: { name: 'from-node' },
    spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com' } }] } },
  };
  const created = await api.createNamespacedResourceClaim({ namespace, body });
  print('created', created.metadata.name, created.spec.devices.requests[0].exactly.allocationMode);
  await informerSaw('add', 'from-node');
  const current = await api.readNamespacedResourceClaim({ namespace, name: 'from-node' });
  current.metadata.labels = { step: 'replaced' };
  const replaced = await api.replaceNamespacedResourceClaim({ namespace, name: 'from-node', body: current });
  print('replaced', replaced.metadata.labels);
  const patched = await api.patchNamespacedResourceClaim({ namespace, name: 'from-node',
    body: [{ op: 'add', path: '/metadata/annotations', value: { note: 'json-patch' } }] });
  print('json-patched', patched.metadata.annotations);
  const merged = await api.patchNamespacedResourceClaim({ namespace, name: 'from-node',
    body: { metadata: { labels: { step: 'merged' } } } },
  k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  print('merge-patched', merged.metadata.labels);
  const listed = await api.listNamespacedResourceClaim({ namespace, labelSelector: 'step=merged' });
  print('selected', listed.items.map((o) => o.metadata.name));
  await api.deleteNamespacedResourceClaim({ namespace, name: 'from-node' });
  await informerSaw('delete', 'from-node');
  print('informer', seen.filter(([, name]) => name === 'from-node'));
} catch (err) {
  print('failed', String(err), err.body ?? '');
  process.exitCode = 1;
} finally {
  stopping = true;
  await informer.stop();
}
