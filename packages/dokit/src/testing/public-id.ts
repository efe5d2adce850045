import { derivePublicId } from "../websockets/public-id";

/**
 * @returns the public id dokit shows other clients of connection id `id` (presence keys and `you`,
 *   a room message's `from`), for expected frames in tests
 */
export function publicIdOf(id: string): Promise<string> {
  return derivePublicId(id);
}
