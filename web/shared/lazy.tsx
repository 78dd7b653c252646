/**
 * A screen loaded as its own chunk on first use (the build splits dynamic imports), so the first
 * load carries only what every page needs. Loading shows the usual spinner; a failed load says so
 * with a retry that reloads the page (a new release may have replaced the chunk's file).
 */
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ErrorBox, Loading } from "./states";

export function lazyScreen<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let chunk: Promise<ComponentType<P>> | undefined;
  return function LazyScreen(props: P) {
    const [Screen, setScreen] = useState<ComponentType<P> | null>(null);
    const [failure, setFailure] = useState<unknown>(null);
    useEffect(() => {
      chunk ??= load();
      chunk.then((c) => setScreen(() => c)).catch((e) => {
        chunk = undefined;
        setFailure(e);
      });
    }, []);
    if (failure) return <ErrorBox error={failure} retry={() => location.reload()} />;
    return Screen ? <Screen {...props} /> : <Loading />;
  };
}
