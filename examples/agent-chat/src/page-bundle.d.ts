// The page bundled by examples/build-pages.ts from page/ (src/page-bundle.js, generated):
// file name (`page.js`, `chunk-….js`) → code.
declare const files: Readonly<Record<string, string>>;
export default files;
