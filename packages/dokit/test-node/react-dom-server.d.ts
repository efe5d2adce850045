// @types/react-dom is not installed; the one function react.test.ts uses.
declare module "react-dom/server" {
  import type { ReactNode } from "react";
  export function renderToString(node: ReactNode): string;
}
