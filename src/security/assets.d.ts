/** A file imported `with { type: "file" }`: its path, inside the executable once compiled. */
declare module "*.gz" {
  const path: string;
  export default path;
}
