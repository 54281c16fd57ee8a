// Ambient types: LLM-facing `.md` texts are imported as strings (embedded in the compiled binary).
declare module "*.md" {
  const text: string;
  export default text;
}
