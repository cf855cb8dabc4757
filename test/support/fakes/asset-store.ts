// A local asset store in a temporary folder with some of its methods replaced: the suites that
// make storage fail or lag at a chosen moment (a lost upload, a full disk, a slow write) write
// only the fault; everything else reaches the real store.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AssetStore, LocalAssetStore } from '../../../src/assets/store.ts';

export async function localStoreWith(faults: (inner: LocalAssetStore) => Partial<AssetStore>): Promise<AssetStore> {
  const inner = new LocalAssetStore(await mkdtemp(join(tmpdir(), 'likeness-assets-')));
  const passThrough: AssetStore = {
    kind: 'local',
    put: (key, bytes, type) => inner.put(key, bytes, type),
    putFile: (key, path, type) => inner.putFile(key, path, type),
    get: (key) => inner.get(key),
    open: (key) => inner.open(key),
    delete: (key) => inner.delete(key),
    deletePrefix: (prefix) => inner.deletePrefix(prefix),
    list: (prefix) => inner.list(prefix),
  };
  return { ...passThrough, ...faults(inner) };
}

/**
 * A store that, while `losing` is set, has lost every retrain's stored upload (`…/upload.*`): a
 * fault of ours that the retrain meets after its 202.
 */
export async function storeLosingUploads(): Promise<{ store: AssetStore; losing: boolean }> {
  const lost: { store?: AssetStore; losing: boolean } = { losing: false };
  const store = await localStoreWith((inner) => ({
    get: async (key) => (lost.losing && key.includes('/upload.') ? undefined : inner.get(key)),
  }));
  return Object.assign(lost, { store });
}
