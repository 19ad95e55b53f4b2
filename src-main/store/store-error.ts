import type { StoreErrorCode } from '../../src-shared/domain/store-types.ts';

/** A store failure meant for users: a code and a message that says what to do, never a stack. */
export class StoreError extends Error {
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string) {
    super(message);
    this.name = 'StoreError';
    this.code = code;
  }
}
