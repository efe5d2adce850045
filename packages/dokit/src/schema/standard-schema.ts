// The Standard Schema interface (https://standardschema.dev), implemented by
// zod 4, valibot and arktype. dokit checks values through it and never
// imports a schema library itself.

/** A value that implements Standard Schema v1. */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** The outcome of a Standard Schema validation. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }> };

/** The output type of a schema. */
export type InferOutput<S> = S extends StandardSchema<unknown, infer O> ? O : never;

/** @returns whether `value` implements Standard Schema */
export function isStandardSchema(value: unknown): value is StandardSchema {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { "~standard"?: { validate?: unknown } })["~standard"]?.validate === "function"
  );
}

/** @returns a one-line summary of a failed validation's issues */
export function describeIssues(issues: ReadonlyArray<{ message: string; path?: ReadonlyArray<unknown> }>): string {
  return issues
    .map((issue) => {
      const path = (issue.path ?? []).map((p) => (typeof p === "object" && p !== null ? (p as { key: unknown }).key : p));
      return path.length > 0 ? `${path.join(".")}: ${issue.message}` : issue.message;
    })
    .join("; ");
}
