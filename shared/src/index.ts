export * from './error-message';
export * from './errors';
export * from './limits';
export * from './roles';
export * from './schemas';
export * from './serial-prefix';
