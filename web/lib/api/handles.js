// Engine objects that a JS object owns (a trainer, a model): freed by its
// dispose(), or, when it is dropped without one, once the garbage collector
// finds it unreachable.

// One FinalizationRegistry per engine and destroy function.
const registries = new WeakMap();

function registryOf(core, destroy) {
  if (!registries.has(core)) registries.set(core, new Map());
  const byDestroy = registries.get(core);
  if (!byDestroy.has(destroy)) {
    const free = core.engine[destroy];
    byDestroy.set(destroy, new FinalizationRegistry((pointer) => free(pointer)));
  }
  return byDestroy.get(destroy);
}

/**
 * The handle of the engine object at `pointer`, which the C function named
 * `destroy` frees: { live, pointer }. Whatever keeps the handle keeps the
 * object, so every method of its owner refers to the handle.
 */
export function adopt(core, destroy, pointer) {
  const handle = { live: true, pointer };
  registryOf(core, destroy).register(handle, pointer, handle);
  return handle;
}

/** Frees the handle's object now; a second call does nothing. */
export function release(core, destroy, handle) {
  if (!handle.live) return;
  handle.live = false;
  registryOf(core, destroy).unregister(handle);
  core.engine[destroy](handle.pointer);
}
