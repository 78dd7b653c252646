/**
 * The password_hash of an account made by joining through a provider: a well-formed argon2id
 * hash (so a password check spends the usual time and never throws) of no password at all, since
 * no input hashes to zeros. A password reset replaces it; until then the account has no password.
 */
export const NO_PASSWORD = `$argon2id$v=19$m=19456,t=2,p=1$${"A".repeat(22)}$${"A".repeat(43)}`;

/** Whether the account has a password of its own: GET /auth/me's `has_password` and the unlink rule both ask this. */
export const hasPassword = (user: { password_hash: string }): boolean => user.password_hash !== NO_PASSWORD;
