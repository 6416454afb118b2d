export * from './errors';
export * from './limits';
export * from './roles';
export * from './schemas';
