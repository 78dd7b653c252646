import { type Static, t } from "elysia";
import { AppError, BEARER } from "../../kernel/errors";
import { NAME_PATTERN } from "../../kernel/validation";

/**
 * The bodies and answers of /api/v1/auth/passkeys, each declared once: the schemas validate and
 * document them, and their Static types are what the service takes and answers.
 */

/** base64url without padding, as WebAuthn's JSON forms carry binary values. */
const B64 = (maxLength: number) => t.String({ pattern: "^[A-Za-z0-9_-]*$", maxLength });
const Transports = t.Array(t.String({ pattern: "^[a-z-]{1,32}$" }), { maxItems: 8 });
/** What the browser reports of extensions (credProps and the like): kept, never read. */
const ExtensionResults = t.Record(t.String({ maxLength: 64 }), t.Unknown(), { maxProperties: 16 });
const Attachment = t.Optional(t.Union([t.Literal("platform"), t.Literal("cross-platform")]));

export const PasskeyName = t.String({ minLength: 1, maxLength: 100, pattern: NAME_PATTERN, description: "A name the user recognizes the passkey by" });

/** A new credential as the browser's `PublicKeyCredential.toJSON()` (or @simplewebauthn/browser) gives it. */
export const RegistrationResponse = t.Object(
  {
    id: B64(1400),
    rawId: B64(1400),
    type: t.Literal("public-key"),
    response: t.Object({
      clientDataJSON: B64(8192),
      attestationObject: B64(65536),
      authenticatorData: t.Optional(B64(65536)),
      transports: t.Optional(Transports),
      publicKeyAlgorithm: t.Optional(t.Integer()),
      publicKey: t.Optional(B64(8192)),
    }),
    authenticatorAttachment: Attachment,
    clientExtensionResults: ExtensionResults,
  },
  { title: "PasskeyRegistrationResponse" },
);
export type RegistrationResponse = Static<typeof RegistrationResponse>;

/** An assertion as the browser's `PublicKeyCredential.toJSON()` (or @simplewebauthn/browser) gives it. */
export const AuthenticationResponse = t.Object(
  {
    id: B64(1400),
    rawId: B64(1400),
    type: t.Literal("public-key"),
    response: t.Object({
      clientDataJSON: B64(8192),
      authenticatorData: B64(65536),
      signature: B64(4096),
      userHandle: t.Optional(B64(256)),
    }),
    authenticatorAttachment: Attachment,
    clientExtensionResults: ExtensionResults,
  },
  { title: "PasskeyAuthenticationResponse" },
);
export type AuthenticationResponse = Static<typeof AuthenticationResponse>;

export const RegisterVerifyBody = t.Object({ response: RegistrationResponse, name: t.Optional(PasskeyName) });
export type RegisterVerifyBody = Static<typeof RegisterVerifyBody>;

export const LoginVerifyBody = t.Object({ response: AuthenticationResponse });
export type LoginVerifyBody = Static<typeof LoginVerifyBody>;

export const RenameBody = t.Object({ name: PasskeyName });
export type RenameBody = Static<typeof RenameBody>;

export const PasskeyRead = t.Object(
  {
    id: t.String(),
    name: t.String(),
    created_at: t.String({ format: "date-time" }),
    last_used_at: t.Nullable(t.String({ format: "date-time" })),
    backed_up: t.Boolean({ description: "Whether the authenticator says the passkey is synced (backed up), e.g. to a password manager" }),
    transports: t.Array(t.String()),
  },
  { title: "PasskeyRead" },
);
export type PasskeyRead = Static<typeof PasskeyRead>;
export const PasskeyList = t.Array(PasskeyRead);

const Descriptor = t.Object({ id: t.String(), type: t.Literal("public-key"), transports: t.Optional(t.Array(t.String())) });

/** `PublicKeyCredentialCreationOptionsJSON`: give it to `navigator.credentials.create` (or startRegistration). */
export const CreationOptions = t.Object(
  {
    challenge: t.String(),
    rp: t.Object({ id: t.Optional(t.String()), name: t.String() }),
    user: t.Object({ id: t.String(), name: t.String(), displayName: t.String() }),
    pubKeyCredParams: t.Array(t.Object({ type: t.Literal("public-key"), alg: t.Integer() })),
    timeout: t.Optional(t.Integer()),
    excludeCredentials: t.Optional(t.Array(Descriptor)),
    authenticatorSelection: t.Optional(
      t.Object({
        authenticatorAttachment: t.Optional(t.String()),
        residentKey: t.Optional(t.String()),
        requireResidentKey: t.Optional(t.Boolean()),
        userVerification: t.Optional(t.String()),
      }),
    ),
    attestation: t.Optional(t.String()),
    extensions: t.Optional(t.Record(t.String(), t.Unknown())),
    hints: t.Optional(t.Array(t.String())),
  },
  { title: "PasskeyCreationOptions" },
);
export type CreationOptions = Static<typeof CreationOptions>;

/** `PublicKeyCredentialRequestOptionsJSON`: give it to `navigator.credentials.get` (or startAuthentication). */
export const RequestOptions = t.Object(
  {
    challenge: t.String(),
    rpId: t.Optional(t.String()),
    timeout: t.Optional(t.Integer()),
    allowCredentials: t.Optional(t.Array(Descriptor)),
    userVerification: t.Optional(t.String()),
    extensions: t.Optional(t.Record(t.String(), t.Unknown())),
    hints: t.Optional(t.Array(t.String())),
  },
  { title: "PasskeyRequestOptions" },
);
export type RequestOptions = Static<typeof RequestOptions>;

export const Removed = t.Object({ detail: t.String() });
export type Removed = Static<typeof Removed>;

export const passkeyErrors = {
  /** Every failed passkey sign-in answers this one sentence: which check failed is in the audit row. */
  invalid: () => new AppError(401, "invalid_passkey", "This passkey could not be verified. Try again, or sign in another way.", BEARER),
  /** Registration's own failures: the challenge, origin, relying party or user verification. */
  registrationFailed: () => new AppError(400, "passkey_registration_failed", "The new passkey could not be verified: start again."),
  alreadyRegistered: () => new AppError(409, "passkey_already_registered", "This passkey is registered already."),
  lastWayIn: () =>
    new AppError(409, "last_sign_in_method", "This is your only way to sign in: add another passkey, an identity provider or a password first."),
  requiredByPolicy: () =>
    new AppError(409, "required_by_policy", "Your organization requires you to keep a passkey: add another one before removing this one."),
  notFound: () => new AppError(404, "not_found", "No such passkey."),
  /** The base domain of `localhost` has no one relying party for every organization, nor an IP address any. */
  unavailable: () => new AppError(400, "passkeys_unavailable", "Passkeys work on an organization's own address: open your organization's page and sign in there."),
};
