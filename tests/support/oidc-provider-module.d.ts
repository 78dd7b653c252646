/**
 * The few parts of the `oidc-provider` package the test harness uses (the package ships no types;
 * @types/oidc-provider lags its major versions).
 */
declare module "oidc-provider" {
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: unknown, res: unknown) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    Grant: new (init: { clientId: string; accountId: string }) => { addOIDCScope(scope: string): void; save(): Promise<string> };
  }
}
