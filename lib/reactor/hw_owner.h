/* hw_owner.h — which reactor runs on the calling thread.
 *
 * Objects with one owning reactor (a replica manager, a partition log, a
 * transport instance) record that reactor's id when they are created;
 * their entry points compare it with hw_reactor_current_id
 * (HW_ASSERT_OWNER, engine/common/hw_assert.h): one thread-local load and
 * a compare. hw_reactor_run sets the id for as long as its loop runs;
 * every other thread (start-up and shutdown on the main thread, the CLI's
 * producer threads, single-threaded tests) has -1, where no owner is
 * checked.
 */
#ifndef HW_OWNER_H
#define HW_OWNER_H

/* An owner id that is never checked (objects used by several threads under
 * their own locking, or by code that runs no reactor). */
#define HW_OWNER_ANY (-1)

/* The id (hw_reactor_cfg.id, >= 0) of the reactor whose loop runs on this
 * thread, or HW_OWNER_ANY. Written only by hw_reactor_run. */
extern _Thread_local int hw_reactor_current_id;

#endif
