// quire — ES module entry (the same objects as the CommonJS entry index.js).
import quire from './index.js';

export const {
  render, compact, plan, estimate, validate, importLog, replay, apply, caps, digest,
  Session, Request, QuireError, libraryVersion, version,
} = quire;
export default quire;
