// Finding a command on a PATH, as a shell would, for the scripts that build a PATH of their own.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** @returns the first executable named `name` in the folders of `path`, or undefined */
export function which(name: string, path: string): string | undefined {
  for (const folder of path.split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(folder, name), constants.X_OK);
      return join(folder, name);
    } catch {}
  }
  return undefined;
}
