// boundary.hpp — how the core's C entry points keep C++ failures inside: every
// one runs its body through sh::guard, which turns an escaping exception into
// the sh_status of simhash_core.h.  C++ only; never included by the shim.
#ifndef SIMHASH_BOUNDARY_HPP
#define SIMHASH_BOUNDARY_HPP

#include "simhash_core.h"

#include <new>

namespace sh
{

// Thrown from deep inside a computation when the caller's sh_interrupt_fn
// asked it to stop; guard answers SH_ERR_INTERRUPTED.
struct Interrupted
{
};

// Runs body() (which returns an sh_status) and returns its status; an
// exception that escapes it becomes SH_ERR_INTERRUPTED (sh::Interrupted),
// SH_ERR_NOMEM (std::bad_alloc) or SH_ERR_INTERNAL (anything else).
template <class Body>
sh_status guard(Body &&body) noexcept
{
    try
    {
        return body();
    }
    catch (const Interrupted &)
    {
        return SH_ERR_INTERRUPTED;
    }
    catch (const std::bad_alloc &)
    {
        return SH_ERR_NOMEM;
    }
    catch (...)
    {
        return SH_ERR_INTERNAL;
    }
}

}  // namespace sh

#endif  // SIMHASH_BOUNDARY_HPP
