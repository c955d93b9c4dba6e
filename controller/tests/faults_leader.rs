//! Leader crashes, fencing, and a crash between two writes (written next).
