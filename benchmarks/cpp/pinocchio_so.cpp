// Pinocchio's C++ second-order inverse-dynamics derivatives, callable through ctypes, for
// benchmarks/pinocchio_cpp.py (the Python bindings of Pinocchio do not expose them).
//
// A handle holds one model, its Data, a state (q, v, a) and four caller-owned tensors.  Each timed entry
// point runs its algorithm `reps` times, so that the Python side times whole batches:
//   pso_fo        computeRNEADerivatives                      (first order, what the Python binding calls)
//   pso_so_data   ComputeRNEASecondOrderDerivatives(model, data, q, v, a): zeroes the four tensors of its
//                 Data on every call, as a fresh result needs (compare with our call without out=)
//   pso_so_own    the overload that fills caller-owned tensors without zeroing them (compare with out=)
// Models come from a URDF with a free-flyer root (Pinocchio's own parser) or from a text file of revolute
// joints (parent, type, axis, placement, inertia: written by benchmarks/pinocchio_cpp.py).

#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea-second-order-derivatives.hpp>
#include <pinocchio/parsers/urdf.hpp>

#include <fstream>
#include <string>

namespace
{
  using pinocchio::Data;
  using pinocchio::Model;

  struct Handle
  {
    Model model;
    Data * data = nullptr;
    Eigen::VectorXd q, v, a;
    Data::Tensor3x t1, t2, t3, t4;
  };

  // One line per joint: parent, type (0, 1, 2: revolute about x, y, z; 3: about `axis`), axis (3),
  // placement rotation (9, row major) and translation (3), mass, centre of mass (3), rotational inertia
  // about the centre of mass (9, row major).
  bool read_revolute_tree(const char * path, Model & model)
  {
    std::ifstream f(path);
    int nj = 0;
    if (!(f >> nj))
      return false;
    for (int j = 0; j < nj; ++j)
    {
      double x[30];
      for (double & xk : x)
        if (!(f >> xk))
          return false;
      const Eigen::Vector3d axis(x[2], x[3], x[4]);
      Eigen::Matrix3d R, Ic;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
        {
          R(r, c) = x[5 + 3 * r + c];
          Ic(r, c) = x[21 + 3 * r + c];
        }
      const pinocchio::SE3 M(R, Eigen::Vector3d(x[14], x[15], x[16]));
      const auto parent = static_cast<pinocchio::JointIndex>(x[0]);
      const std::string name = "j" + std::to_string(j);
      pinocchio::JointIndex id;
      switch (static_cast<int>(x[1]))
      {
      case 0:
        id = model.addJoint(parent, pinocchio::JointModelRX(), M, name);
        break;
      case 1:
        id = model.addJoint(parent, pinocchio::JointModelRY(), M, name);
        break;
      case 2:
        id = model.addJoint(parent, pinocchio::JointModelRZ(), M, name);
        break;
      default:
        id = model.addJoint(parent, pinocchio::JointModelRevoluteUnaligned(axis), M, name);
      }
      model.appendBodyToJoint(id, pinocchio::Inertia(x[17], Eigen::Vector3d(x[18], x[19], x[20]), Ic),
                              pinocchio::SE3::Identity());
    }
    return true;
  }
} // namespace

extern "C"
{
  // kind 0: URDF with a free-flyer root; kind 1: the revolute text format above.  gravity: (3,).
  void * pso_load(const char * path, int kind, const double * gravity)
  {
    auto * h = new Handle();
    try
    {
      if (kind == 0)
        pinocchio::urdf::buildModel(std::string(path), pinocchio::JointModelFreeFlyer(), h->model);
      else if (!read_revolute_tree(path, h->model))
      {
        delete h;
        return nullptr;
      }
    }
    catch (const std::exception &)
    {
      delete h;
      return nullptr;
    }
    h->model.gravity.linear() = Eigen::Vector3d(gravity[0], gravity[1], gravity[2]);
    h->data = new Data(h->model);
    const int n = h->model.nv;
    h->q = pinocchio::neutral(h->model);
    h->v = Eigen::VectorXd::Zero(n);
    h->a = Eigen::VectorXd::Zero(n);
    for (auto * t : {&h->t1, &h->t2, &h->t3, &h->t4})
    {
      t->resize(n, n, n);
      t->setZero();
    }
    return h;
  }

  int pso_nq(void * h)
  {
    return static_cast<Handle *>(h)->model.nq;
  }

  int pso_nv(void * h)
  {
    return static_cast<Handle *>(h)->model.nv;
  }

  void pso_set_state(void * hp, const double * q, const double * v, const double * a)
  {
    auto * h = static_cast<Handle *>(hp);
    h->q = Eigen::Map<const Eigen::VectorXd>(q, h->model.nq);
    h->v = Eigen::Map<const Eigen::VectorXd>(v, h->model.nv);
    h->a = Eigen::Map<const Eigen::VectorXd>(a, h->model.nv);
  }

  void pso_fo(void * hp, int reps)
  {
    auto * h = static_cast<Handle *>(hp);
    for (int r = 0; r < reps; ++r)
      pinocchio::computeRNEADerivatives(h->model, *h->data, h->q, h->v, h->a);
  }

  void pso_so_data(void * hp, int reps)
  {
    auto * h = static_cast<Handle *>(hp);
    for (int r = 0; r < reps; ++r)
      pinocchio::ComputeRNEASecondOrderDerivatives(h->model, *h->data, h->q, h->v, h->a);
  }

  void pso_so_own(void * hp, int reps)
  {
    auto * h = static_cast<Handle *>(hp);
    for (int r = 0; r < reps; ++r)
      pinocchio::ComputeRNEASecondOrderDerivatives(h->model, *h->data, h->q, h->v, h->a, h->t1, h->t2, h->t3,
                                                   h->t4);
  }

  // The four tensors of the last pso_so_own call (d2tau_dqdq, d2tau_dvdv, d2tau_dqdv, d2tau_dadq) into
  // out (4, nv, nv, nv), C order: out[m, i, j, k] = T_m(i, j, k).
  void pso_tensors(void * hp, double * out)
  {
    auto * h = static_cast<Handle *>(hp);
    const int n = h->model.nv;
    const Data::Tensor3x * T[4] = {&h->t1, &h->t2, &h->t3, &h->t4};
    for (int m = 0; m < 4; ++m)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          for (int k = 0; k < n; ++k)
            out[((static_cast<long>(m) * n + i) * n + j) * n + k] = (*T[m])(i, j, k);
  }

  void pso_free(void * hp)
  {
    auto * h = static_cast<Handle *>(hp);
    delete h->data;
    delete h;
  }
}
