/** Declarations the bundle needs and no installed package gives (@types/react-dom is not a dependency). */
declare module 'react-dom/client' {
  import type { ReactNode } from 'react';
  export interface Root {
    render(children: ReactNode): void;
    unmount(): void;
  }
  export function createRoot(container: Element): Root;
}

/** esbuild bundles imported CSS into the app's stylesheet. */
declare module '*.css';
